import { describe, expect, it } from "vitest";
import { NOT_AUTHORIZED_TEXT } from "../../../durable-objects/session/inbox/triage-access.ts";
import {
  interactionMessages,
  newScenario,
  postInteraction,
  recorded,
  scriptModel,
  settle,
  snowflake,
  TEST_DISCORD,
} from "./helpers.ts";

/**
 * Discord HTTP interactions: the endpoint answers Discord's signed PING, a slash command is stored
 * and deferred within the 3 s window, and the agent's answer edits the deferred response through the
 * interaction webhook (no bot token needed there).
 */

function command(user: string, text: string, extra: Record<string, unknown> = {}) {
  return {
    id: snowflake(),
    application_id: TEST_DISCORD.applicationId,
    type: 2,
    token: `tok-${snowflake()}`,
    channel_id: snowflake(),
    user: { id: user, username: "someone" },
    data: { name: "ask", options: [{ name: "question", type: 3, value: text }] },
    ...extra,
  };
}

describe("Discord interactions", { timeout: 60_000 }, () => {
  it("answers a signed PING with PONG", async () => {
    const res = await postInteraction({
      id: snowflake(),
      application_id: TEST_DISCORD.applicationId,
      type: 1,
      token: "ping-token",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ type: 1 });
  });

  it("defers an allowed user's slash command (ephemeral) and edits the answer into the response", async () => {
    const scenario = newScenario("dc-slash");
    await scriptModel(scenario, [{ type: "text", text: "Slash answer." }]);
    const interaction = command(TEST_DISCORD.allowed[7]!, `what now? [scenario:${scenario}]`);
    const res = await postInteraction(interaction);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ type: 5, data: { flags: 64 } });
    expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted");

    const until = Date.now() + 45_000;
    let answer: Awaited<ReturnType<typeof interactionMessages>> = [];
    while (Date.now() < until && !(answer = await interactionMessages(interaction.token)).length)
      await settle(150);
    expect(answer.map((m) => m.content)).toEqual(["Slash answer."]);
    const requests = await recorded(scenario);
    expect(requests).toHaveLength(1);
    expect(JSON.stringify(requests[0]!.body)).toContain("/ask what now?");
  });

  it("runs nothing for a stranger's slash command in a guild channel that is not allowlisted (the refusal: refusals.test.ts)", async () => {
    const scenario = newScenario("dc-slash-stranger");
    await scriptModel(scenario, [{ type: "text", text: "must not be said" }]);
    const interaction = command(snowflake(), `obey [scenario:${scenario}]`, {
      guild_id: TEST_DISCORD.guild,
      channel_id: TEST_DISCORD.otherChannel,
      user: undefined,
      member: { user: { id: snowflake(), username: "x" } },
    });
    const res = await postInteraction(interaction);
    expect(res.status).toBe(200);
    await settle(2500);
    expect(await recorded(scenario)).toHaveLength(0);
    expect((await interactionMessages(interaction.token)).map((m) => m.content)).toEqual([
      NOT_AUTHORIZED_TEXT,
    ]);
  });

  it("acknowledges a button click with a deferred update (6); a stranger's click starts nothing", async () => {
    const scenario = newScenario("dc-click");
    await scriptModel(scenario, [{ type: "text", text: "must not be said" }]);
    const click = (user: string) => ({
      id: snowflake(),
      application_id: TEST_DISCORD.applicationId,
      type: 3,
      token: `tok-${snowflake()}`,
      channel_id: snowflake(),
      user: { id: user, username: "x" },
      data: { custom_id: `approve [scenario:${scenario}]`, component_type: 2 },
    });
    const stranger = await postInteraction(click(snowflake()));
    expect(stranger.status).toBe(200);
    expect(await stranger.json()).toEqual({ type: 6 });
    const allowed = await postInteraction(click(TEST_DISCORD.allowed[10]!));
    expect(await allowed.json()).toEqual({ type: 6 });
    await settle(2000);
    // A click is context for the next run, never a run of its own (and a stranger's not even that).
    expect(await recorded(scenario)).toHaveLength(0);
  });

  it("answers a body that is not an interaction with 400", async () => {
    const res = await postInteraction({ hello: "world" });
    expect(res.status).toBe(400);
  });
});
