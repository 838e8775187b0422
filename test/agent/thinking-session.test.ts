import { beforeAll, describe, expect, it } from "vitest";
import { newScenario } from "./model-helpers.ts";
import { slackMessages, uniqueId } from "../channels/slack/helpers.ts";
import {
  approveOpsSenders,
  collectRunEvents,
  modelRequests,
  opsDmEvent,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../durable-objects/helpers.ts";

/**
 * /think and /reasoning end to end (#24 items 1 and 10): a Slack DM on the "ops" account (the
 * defaults a user gets) in a session of its own; the directives come from the same session's web
 * chat. The level reaches every model call of the run, the signed thinking of a tool round goes
 * back to the model (the fake refuses the round otherwise, and the user would get an error notice),
 * an inline /think applies once, and /reasoning on sends the thinking as its own message first.
 */
const OWNER = uniqueId("UTHINK");
beforeAll(() => approveOpsSenders(OWNER));

async function say(sessionKey: string, text: string): Promise<string> {
  const events = await collectRunEvents(
    await sessionStub(sessionKey).chat(webchatEvent(sessionKey, text)),
  );
  const done = events.find((event) => event.type === "done");
  return done?.type === "done" ? done.text : JSON.stringify(events);
}

async function dm(sessionKey: string, channel: string, text: string): Promise<void> {
  expect(
    await sessionStub(sessionKey).accept(opsDmEvent(sessionKey, OWNER, channel, text)),
  ).toMatchObject({ status: "accepted" });
}

async function visible(channel: string): Promise<string[]> {
  return (await slackMessages(channel))
    .filter((message) => !message.deleted)
    .map((message) => message.text);
}

function thinkingRound(scenario: string) {
  return scriptModel(scenario, [
    {
      type: "tool_calls",
      thinking: "Check the session first.",
      calls: [{ name: "session_status", arguments: {} }],
    },
    { type: "text", thinking: "The status is fine; say so.", text: "The session is fine." },
  ]);
}

describe("/think", () => {
  it("sends the session's level on every call of a tool round, with the thinking kept between them", async () => {
    const key = `agent:main:think-${crypto.randomUUID().slice(0, 8)}`;
    expect(await say(key, "/model fakeanthropic/claude-opus-4-7")).toContain(
      "Model set to fakeanthropic/claude-opus-4-7",
    );
    expect(await say(key, "/think high")).toBe("Thinking level set to high.");
    expect(await say(key, "/status")).toContain("💭 Think: high (session) · Reasoning: off");

    const channel = uniqueId("D");
    const scenario = newScenario("think-session");
    await thinkingRound(scenario);
    await dm(key, channel, `how are we doing? [scenario:${scenario}]`);
    await waitFor(
      async () => (await visible(channel)).includes("The session is fine."),
      25_000,
      "the answer",
    );
    const requests = await modelRequests(scenario);
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.body.thinking).toEqual({ type: "adaptive" });
      expect(request.body.output_config).toEqual({ effort: "high" });
    }
    const round = requests[1]!.body.messages.at(-2);
    expect(round.role).toBe("assistant");
    expect(round.content[0]).toMatchObject({
      type: "thinking",
      thinking: "Check the session first.",
    });
    // /reasoning is off by default: nothing but the answer reaches the chat.
    expect((await visible(channel)).some((text) => text.startsWith("Thinking"))).toBe(false);
  });

  it("applies an inline /think to that message only", async () => {
    const key = `agent:main:think-${crypto.randomUUID().slice(0, 8)}`;
    await say(key, "/model fakeanthropic/claude-opus-4-7");
    const channel = uniqueId("D");
    const once = newScenario("think-inline");
    await scriptModel(once, [{ type: "text", text: "Quick answer." }]);
    await dm(key, channel, `/think max what is 2+2? [scenario:${once}]`);
    await waitFor(async () => (await visible(channel)).includes("Quick answer."), 25_000);
    const [request] = await modelRequests(once);
    expect(request!.body.output_config).toEqual({ effort: "max" });
    expect(JSON.stringify(request!.body.messages)).not.toContain("/think");
    // The session keeps its own level (here the unset default: off for a model not declared to reason).
    expect(await say(key, "/status")).toContain("💭 Think: off ·");
    const next = newScenario("think-inline-after");
    await scriptModel(next, [{ type: "text", text: "Plain answer." }]);
    await dm(key, channel, `and 3+3? [scenario:${next}]`);
    await waitFor(async () => (await visible(channel)).includes("Plain answer."), 25_000);
    const [after] = await modelRequests(next);
    expect(after!.body.thinking).toBeUndefined();
  });

  it("refuses an unknown level and changes nothing", async () => {
    const key = `agent:main:think-${crypto.randomUUID().slice(0, 8)}`;
    expect(await say(key, "/think big")).toBe(
      'Unknown thinking level "big". Options: off, minimal, low, medium, high, xhigh, adaptive, max, default.',
    );
    expect(await say(key, "/status")).toContain("💭 Think: off ·");
  });
});

describe("/reasoning", () => {
  it("on: the run's thinking arrives as its own message, before the answer, once", async () => {
    const key = `agent:main:reason-${crypto.randomUUID().slice(0, 8)}`;
    await say(key, "/model fakeanthropic/claude-opus-4-7");
    await say(key, "/think medium");
    expect(await say(key, "/reasoning on")).toBe(
      "Reasoning shown: each reply's thinking comes as its own message first.",
    );
    const channel = uniqueId("D");
    const scenario = newScenario("reasoning-on");
    await thinkingRound(scenario);
    await dm(key, channel, `status please [scenario:${scenario}]`);
    await waitFor(
      async () => (await visible(channel)).includes("The session is fine."),
      25_000,
      "the answer",
    );
    const texts = await visible(channel);
    expect(texts).toEqual([
      "Thinking\nCheck the session first.\n\nThe status is fine; say so.",
      "The session is fine.",
    ]);
    expect(await say(key, "/reasoning")).toBe("Reasoning: on. Options: on, off, stream, default.");
    expect(await say(key, "/reasoning default")).toBe("Reasoning visibility reset to default.");
  });
});
