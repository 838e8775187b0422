import { describe, expect, it } from "vitest";
import { recorded } from "../../agent/model-helpers.ts";
import {
  activity,
  newScenario,
  postTeams,
  scriptModel,
  settle,
  teamsActivities,
  TEST_MSTEAMS,
  uniqueId,
  waitFor,
} from "./helpers.ts";

/**
 * `channels.msteams.teams.<team>.channels.<channel>` (test config: team eng with requireMention
 * false; channel "gated" requires a mention and replies top-level; channel "threaded" replies in the
 * thread): settings read channel → team → account, the map an allowlist of teams and channels.
 */

const { team, teamChannels } = TEST_MSTEAMS;

async function post(
  channel: string,
  options: { teamId?: string; mention?: boolean; root?: string } = {},
) {
  const scenario = newScenario("teams-map");
  await scriptModel(scenario, [{ type: "text", text: `answer ${scenario}` }]);
  const root = options.root ?? uniqueId("1");
  const conversation = `${channel};messageid=${root}`;
  const event = activity({
    kind: "channel",
    conversation,
    sender: uniqueId("aad-t"),
    mentionBot: options.mention,
    text: `question [scenario:${scenario}]`,
    extra: {
      channelData: { tenant: { id: TEST_MSTEAMS.tenantId }, team: { id: options.teamId ?? team } },
    },
  });
  expect((await postTeams(event)).status).toBe(200);
  return { scenario, root, answer: `answer ${scenario}` };
}

async function answeredIn(channel: string, answer: string): Promise<string> {
  const found = await waitFor(
    async () =>
      (await teamsActivities(channel)).find((a) => a.type === "message" && a.text === answer),
    25_000,
  );
  await settle(1500);
  expect(
    (await teamsActivities(channel)).filter((a) => a.type === "message" && a.text === answer),
  ).toHaveLength(1);
  return found.conversation;
}

async function silent(scenario: string, channel: string) {
  await settle(2500);
  expect(await recorded(scenario)).toEqual([]);
  expect(
    (await teamsActivities(channel)).filter(
      (a) => a.type === "message" && a.text?.includes(scenario),
    ),
  ).toEqual([]);
}

describe("Microsoft Teams per-team and per-channel settings", () => {
  it("a channel with no settings of its own inherits the team's requireMention false, and with it top-level replies", async () => {
    const { answer } = await post(teamChannels.inherits);
    expect(await answeredIn(teamChannels.inherits, answer)).toBe(teamChannels.inherits);
  });

  it("a channel's requireMention true overrides its team's false; its replyStyle top-level is kept", async () => {
    const quiet = await post(teamChannels.gated);
    await silent(quiet.scenario, teamChannels.gated);
    const { answer } = await post(teamChannels.gated, { mention: true });
    expect(await answeredIn(teamChannels.gated, answer)).toBe(teamChannels.gated);
  });

  it("a channel's replyStyle thread answers in the thread, without a mention (the team's rule)", async () => {
    const { answer, root } = await post(teamChannels.threaded);
    expect(await answeredIn(teamChannels.threaded, answer)).toBe(
      `${teamChannels.threaded};messageid=${root}`,
    );
  });

  it("a channel's tools.deny takes the tool away from runs there only", async () => {
    const toolNames = async (scenario: string) => {
      const [request] = await waitFor(async () => {
        const requests = await recorded(scenario);
        return requests.length ? requests : undefined;
      }, 25_000);
      const tools = (request!.body.tools ?? []) as Array<{
        name?: string;
        function?: { name?: string };
      }>;
      return tools.map((tool) => tool.name ?? tool.function?.name);
    };
    const open = await post(teamChannels.inherits);
    expect(await toolNames(open.scenario)).toContain("write");
    const narrowed = await post(teamChannels.threaded);
    const names = await toolNames(narrowed.scenario);
    expect(names.length).toBeGreaterThan(0);
    expect(names).not.toContain("write");
  });

  it("a channel of a listed team missing from its channels map, and an unlisted team, are refused even with a mention", async () => {
    const unlisted = await post(teamChannels.unlisted, { mention: true });
    await silent(unlisted.scenario, teamChannels.unlisted);
    const otherTeam = "19:team-other@thread.tacv2";
    const stranger = await post("19:other-general@thread.tacv2", {
      teamId: otherTeam,
      mention: true,
    });
    await silent(stranger.scenario, "19:other-general@thread.tacv2");
  });
});
