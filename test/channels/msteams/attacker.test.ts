import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../../durable-objects/session/storage.ts";
import type { Env } from "../../../workers/env.ts";
import { recorded } from "../../agent/model-helpers.ts";
import {
  activity,
  messageTexts,
  newScenario,
  postTeams,
  scriptModel,
  settle,
  teamsActivities,
  TEST_MSTEAMS,
  uniqueId,
  waitFor,
} from "./helpers.ts";

const workerEnv = env as unknown as Env;

/**
 * The Azure Bot behind the Teams app also serves Web Chat and Direct Line, and the Bot Framework
 * posts their activities to the same /api/messages with a token that passes every check. There the
 * client picks `from.id` and `aadObjectId` itself, so an activity claiming the owner must not run
 * in the owner's session, nor get an answer posted back. The configured tenant is the other fence.
 */

async function droppedWithoutRun(response: Response, scenario: string, conversation: string) {
  expect(response.status).toBe(200);
  expect(response.headers.get("x-edgeclaw-ingest")).toBeNull();
  await settle(1_500);
  expect(await recorded(scenario)).toEqual([]);
  expect(await teamsActivities(conversation)).toEqual([]);
}

describe("Microsoft Teams: only Teams activities of the configured tenant", () => {
  it.each(["directline", "webchat", "emulator"])(
    "a %s activity with a valid Bot Framework token claiming the owner's AAD id gets no run and no post",
    async (channelId) => {
      const scenario = newScenario(`teams-${channelId}`);
      await scriptModel(scenario, [{ type: "text", text: "the owner's secrets" }]);
      const conversation = uniqueId("dl-conv");
      const body = activity({
        kind: "personal",
        conversation,
        text: `what did I tell you yesterday? [scenario:${scenario}]`,
      });
      body.channelId = channelId;
      body.from = { id: TEST_MSTEAMS.owner, name: "Owner", aadObjectId: TEST_MSTEAMS.owner };
      const response = await postTeams(body);
      expect(response.headers.get("x-edgeclaw-dropped")).toMatch(
        new RegExp(`channel ${channelId} is not served`),
      );
      await droppedWithoutRun(response, scenario, conversation);
    },
  );

  it("an activity without channelId is dropped the same way", async () => {
    const scenario = newScenario("teams-no-channel");
    const conversation = `a:${uniqueId("dm")}`;
    const body = activity({ kind: "personal", conversation, text: `hi [scenario:${scenario}]` });
    delete body.channelId;
    await droppedWithoutRun(await postTeams(body), scenario, conversation);
  });

  it("a Teams activity from another tenant (channelData and conversation) gets no run and no post", async () => {
    const scenario = newScenario("teams-tenant");
    await scriptModel(scenario, [{ type: "text", text: "hello other tenant" }]);
    const conversation = `a:${uniqueId("dm")}`;
    const other = "22222222-0000-0000-0000-000000000000";
    const body = activity({ kind: "personal", conversation, text: `hi [scenario:${scenario}]` });
    body.channelData = { tenant: { id: other } };
    body.conversation = { ...(body.conversation as object), tenantId: other };
    const response = await postTeams(body);
    expect(response.headers.get("x-edgeclaw-dropped")).toMatch(/tenant .* refused/);
    await droppedWithoutRun(response, scenario, conversation);
  });

  it("the owner's own Teams activity still runs (the fence is not a wall)", async () => {
    const scenario = newScenario("teams-owner");
    await scriptModel(scenario, [{ type: "text", text: "hi owner" }]);
    const conversation = `a:${uniqueId("dm")}`;
    const response = await postTeams(
      activity({ kind: "personal", conversation, text: `hi [scenario:${scenario}]` }),
    );
    expect(response.status).toBe(200);
    for (let i = 0; i < 60 && !(await messageTexts(conversation)).length; i++) await settle(500);
    expect(await messageTexts(conversation)).toEqual(["hi owner"]);
  });
});

describe("Microsoft Teams: a channel's team/channel rules judge its system events too", () => {
  // Account "open" (groupPolicy open) narrows one team channel to the owner. A stranger refused for
  // messages there must not get his reactions or card clicks into that channel's context: they
  // carry the team (channelData.team), so teams.<team>.channels.<channel> applies to them.
  const channelId = TEST_MSTEAMS.membersChannel;
  const sessionKey = `agent:main:msteams:channel:${channelId.toLowerCase()}`;
  const inChannel = (sender: string, fields: Record<string, unknown>) =>
    activity({
      kind: "channel",
      conversation: `${channelId};messageid=${uniqueId("1")}`,
      sender,
      extra: {
        ...fields,
        channelData: {
          tenant: { id: TEST_MSTEAMS.tenantId },
          team: { id: TEST_MSTEAMS.team },
          channel: { id: channelId },
        },
      },
    });

  it.each([
    ["reaction", { type: "messageReaction", reactionsAdded: [{ type: "like" }] }],
    ["card click", { type: "invoke", name: "adaptiveCard/action", value: { verb: "approve" } }],
  ])("a refused sender's %s is dropped, the owner's is kept as context", async (_name, fields) => {
    const stranger = uniqueId("aad-stranger-");
    const queued = () =>
      runInDurableObject(
        workerEnv.SESSIONS.get(workerEnv.SESSIONS.idFromName(sessionKey)),
        (_instance, state) =>
          (new SessionStore(state.storage.sql).meta.getJson("systemEvents") ?? []).map(
            (event) => event.text,
          ),
      );
    const post = (sender: string) =>
      postTeams(inChannel(sender, fields), { path: TEST_MSTEAMS.openPath });
    expect((await post(stranger)).status).toBe(200);
    expect((await post(TEST_MSTEAMS.owner)).status).toBe(200);
    const texts = await waitFor(async () => {
      const lines = await queued();
      return lines.some((line) => line.includes(TEST_MSTEAMS.owner)) ? lines : undefined;
    });
    expect(texts.filter((line) => line.includes(stranger))).toEqual([]);
  });
});
