import { describe, expect, it } from "vitest";
import { recorded } from "../../agent/model-helpers.ts";
import {
  activity,
  fakeTeams,
  messageTexts,
  newScenario,
  postTeams,
  settle,
  teamsToken,
  TEST_MSTEAMS,
  uniqueId,
} from "./helpers.ts";

/**
 * What reaches /api/messages before any agent work: only activities carrying a bearer JWT the Bot
 * Framework (or the configured tenant) signed for this app, for this serviceUrl, pass; every
 * refusal stores nothing.
 */

async function refusedAndNothingStored(
  response: Response,
  status: number,
  scenario: string,
  conversation: string,
) {
  expect(response.status).toBe(status);
  expect(response.headers.get("x-edgeclaw-ingest")).toBeNull();
  await settle(800);
  expect(await recorded(scenario)).toEqual([]);
  expect(await messageTexts(conversation)).toEqual([]);
}

describe("Microsoft Teams messaging endpoint verification", () => {
  const cases: Array<[string, () => Promise<string | null>]> = [
    ["no token", async () => null],
    ["a token signed by a key Microsoft never published", () => teamsToken({ forged: true })],
    ["an expired token (beyond the 5 minute skew)", () => teamsToken({ expiresInSeconds: -400 })],
    [
      "a token for another bot",
      () => teamsToken({ audience: "99999999-0000-0000-0000-000000000000" }),
    ],
    [
      "a token whose serviceUrl is not the activity's",
      () => teamsToken({ serviceUrl: "https://attacker.example/" }),
    ],
    ["a token from another issuer", () => teamsToken({ issuer: "https://attacker.example" })],
    [
      "an Entra token of another tenant",
      () =>
        teamsToken({
          entraTenant: "22222222-0000-0000-0000-000000000000",
          issuer: "https://login.microsoftonline.com/22222222-0000-0000-0000-000000000000/v2.0",
        }),
    ],
    [
      "an Entra token of the configured tenant for another app",
      () =>
        teamsToken({
          entraTenant: TEST_MSTEAMS.tenantId,
          audience: "99999999-0000-0000-0000-000000000000",
        }),
    ],
    [
      "an Entra token of the configured tenant whose serviceurl is not the activity's",
      () =>
        teamsToken({ entraTenant: TEST_MSTEAMS.tenantId, serviceUrl: "https://attacker.example/" }),
    ],
    [
      "an Entra token of the configured tenant with no serviceurl claim",
      () => teamsToken({ entraTenant: TEST_MSTEAMS.tenantId, noServiceUrl: true }),
    ],
    [
      "an Entra token under the configured tenant's issuer naming another tenant (tid)",
      () =>
        teamsToken({
          entraTenant: TEST_MSTEAMS.tenantId,
          tid: "22222222-0000-0000-0000-000000000000",
        }),
    ],
    ["a Bot Framework token with no serviceurl claim", () => teamsToken({ noServiceUrl: true })],
    [
      "a token naming an unknown key id, still unknown after a refresh",
      () => teamsToken({ forged: true, kid: "bf-nope" }),
    ],
    ["a garbage token", async () => "not.a.jwt"],
  ];
  it.each(cases)("refuses %s with 401 and stores nothing", async (_label, token) => {
    const scenario = newScenario("teams-refused");
    const conversation = `a:${uniqueId("dm")}`;
    const response = await postTeams(
      activity({ kind: "personal", conversation, text: `hi [scenario:${scenario}]` }),
      { token: await token() },
    );
    await refusedAndNothingStored(response, 401, scenario, conversation);
  });

  it("accepts a token with 4 minutes of clock skew and an Entra token of the configured tenant", async () => {
    const skewed = await postTeams(
      activity({
        kind: "personal",
        conversation: `a:${uniqueId("dm")}`,
        sender: uniqueId("aad-x"),
      }),
      { token: await teamsToken({ expiresInSeconds: -240 }) },
    );
    expect(skewed.status).toBe(200);
    const entra = await postTeams(
      activity({
        kind: "personal",
        conversation: `a:${uniqueId("dm")}`,
        sender: uniqueId("aad-x"),
      }),
      { token: await teamsToken({ entraTenant: TEST_MSTEAMS.tenantId }) },
    );
    expect(entra.status).toBe(200);
  });

  it("answers a body with no serviceUrl to match the token with 401, a malformed activity with 400, an oversized one with 413", async () => {
    expect((await postTeams(null, { raw: "{not json" })).status).toBe(401);
    expect((await postTeams({ type: "message", serviceUrl: fakeTeams() })).status).toBe(400);
    expect(
      (
        await postTeams(null, {
          raw: JSON.stringify({ serviceUrl: fakeTeams(), pad: "x".repeat(300 * 1024) }),
        })
      ).status,
    ).toBe(413);
  });

  it("acknowledges activity types it does not use and stores nothing", async () => {
    const response = await postTeams(
      activity({
        type: "installationUpdateX",
        kind: "personal",
        conversation: `a:${uniqueId("dm")}`,
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edgeclaw-dropped")).toMatch(/unsupported activity type/);
  });

  it("answers an adaptive card action invoke with an invoke response", async () => {
    const response = await postTeams(
      activity({
        type: "invoke",
        kind: "personal",
        conversation: `a:${uniqueId("dm")}`,
        extra: { name: "adaptiveCard/action", value: { action: { verb: "ok" } } },
      }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      statusCode: 200,
      type: "application/vnd.microsoft.activity.message",
    });
  });

  it("verifies after Microsoft rotates its key: the new kid is fetched, tokens of the retired key stop working", async () => {
    const post = async (token: string) =>
      (
        await postTeams(
          activity({
            kind: "personal",
            conversation: `a:${uniqueId("dm")}`,
            sender: uniqueId("aad-r"),
          }),
          { token },
        )
      ).status;
    const before = await teamsToken();
    expect(await post(before)).toBe(200);
    await fetch(`${fakeTeams()}/_control/rotate`, { method: "POST" });
    await settle(5_200); // an unknown kid refetches the set at most every 5 s
    expect(await post(await teamsToken())).toBe(200);
    expect(await post(before)).toBe(401);
  });
});
