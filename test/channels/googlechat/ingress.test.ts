import { describe, expect, it } from "vitest";
import {
  chatEvent,
  fakeGoogle,
  googleToken,
  newScenario,
  postChat,
  settle,
  TEST_GOOGLECHAT,
  uniqueId,
  visibleTexts,
} from "./helpers.ts";
import { recorded } from "../../agent/model-helpers.ts";

/**
 * What reaches /googlechat before any agent work: only requests carrying a bearer token that Google
 * signed for this app pass; every refusal stores nothing (the model never hears of it).
 */

async function refusedAndNothingStored(
  response: Response,
  status: number,
  scenario: string,
  space: string,
) {
  expect(response.status).toBe(status);
  expect(response.headers.get("x-edgeclaw-ingest")).toBeNull();
  await settle(800);
  expect(await recorded(scenario)).toEqual([]);
  expect(await visibleTexts(space)).toEqual([]);
}

describe("Google Chat webhook verification", () => {
  const cases: Array<[string, () => Promise<string | null>]> = [
    ["no token", async () => null],
    ["a token signed by a key Google never published", () => googleToken({ forged: true })],
    ["an expired token", () => googleToken({ expiresInSeconds: -120 })],
    [
      "a token for another app's URL",
      () => googleToken({ audience: "https://attacker.example/googlechat" }),
    ],
    ["an ID token of another Google account", () => googleToken({ email: "someone@example.com" })],
    ["an ID token whose email is not verified", () => googleToken({ emailVerified: false })],
    [
      "a project-number token sent to the app-url account",
      () =>
        googleToken({ audienceType: "project-number", audience: TEST_GOOGLECHAT.projectNumber }),
    ],
    ["a garbage token", async () => "not.a.jwt"],
  ];
  it.each(cases)("refuses %s with 401 and stores nothing", async (_label, token) => {
    const scenario = newScenario("gchat-refused");
    const space = `spaces/${uniqueId("D")}`;
    const response = await postChat(
      chatEvent({ space, dm: true, text: `hi [scenario:${scenario}]` }),
      { token: await token() },
    );
    await refusedAndNothingStored(response, 401, scenario, space);
  });

  it("takes project-number tokens on the account that expects them, and only those", async () => {
    const space = `spaces/${uniqueId("D")}`;
    const good = await postChat(chatEvent({ space, dm: true, sender: uniqueId("users/x") }), {
      path: "/googlechat/project",
      token: await googleToken({
        audienceType: "project-number",
        audience: TEST_GOOGLECHAT.projectNumber,
      }),
    });
    expect(good.status).toBe(200);
    expect(await good.json()).toEqual({});
    const wrongProject = await postChat(chatEvent({ space, dm: true }), {
      path: "/googlechat/project",
      token: await googleToken({ audienceType: "project-number", audience: "999999999999" }),
    });
    expect(wrongProject.status).toBe(401);
  });

  it("answers a malformed body with 400, an oversized one with 413, and a GET not at all", async () => {
    expect((await postChat(null, { raw: "{not json" })).status).toBe(400);
    expect((await postChat({ type: "MESSAGE", space: { name: "nope" } })).status).toBe(400);
    expect(
      (await postChat(null, { raw: JSON.stringify({ pad: "x".repeat(300 * 1024) }) })).status,
    ).toBe(413);
    const get = await fetch("https://edgeclaw.test/googlechat").catch(() => undefined);
    expect(get === undefined || get.status !== 200 || (await get.text()) !== "{}").toBe(true);
  });

  it("acknowledges event types it does not use with {} and stores nothing", async () => {
    const response = await postChat(
      chatEvent({ type: "WIDGET_UPDATED", space: `spaces/${uniqueId("S")}` }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edgeclaw-dropped")).toMatch(/unsupported event type/);
  });

  it("verifies after Google rotates its key: the new kid is fetched, tokens of the retired key stop working", async () => {
    // The project-number key: only this file uses it, so rotating it disturbs no other test.
    const project = {
      audienceType: "project-number" as const,
      audience: TEST_GOOGLECHAT.projectNumber,
    };
    const post = async (token: string) =>
      (
        await postChat(
          chatEvent({ space: `spaces/${uniqueId("D")}`, dm: true, sender: uniqueId("users/r") }),
          { path: "/googlechat/project", token },
        )
      ).status;
    const before = await googleToken(project);
    expect(await post(before)).toBe(200); // the Worker now holds the current key set
    await fetch(`${fakeGoogle()}/_control/rotate`, {
      method: "POST",
      body: JSON.stringify({ audienceType: "project-number" }),
    });
    await settle(5_200); // an unknown kid refetches the set at most every 5 s
    expect(await post(await googleToken(project))).toBe(200);
    expect(await post(before)).toBe(401);
  });
});
