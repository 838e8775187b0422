import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { channelDefinitions } from "../../../functions/channels/registry.ts";
import type { Env } from "../../../workers/env.ts";
import { newScenario, script } from "../../agent/model-helpers.ts";
import { uniqueId, waitFor } from "../slack/helpers.ts";
import { TEST_RELAY } from "../../setup/test-config.ts";
import { RELAY_MAX_BODY_BYTES, signRelayBody } from "./index.ts";

/**
 * The generic webhook pipeline, driven through "relay": a channel that exists only in the tests,
 * registered by test/setup/register-channels.ts (its folder + that one line). Nothing else in the
 * code base knows it, yet it is verified, parsed, accepted, answered and sent through the outbox.
 */
const fakeRelay = () => String((env as unknown as Env).FAKE_RELAY_URL);
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface RelayEvent {
  id: string;
  from: string;
  chat?: string;
  text: string;
}

async function post(
  events: RelayEvent[],
  options: { secret?: string; signature?: string; body?: string } = {},
): Promise<Response> {
  const body = options.body ?? JSON.stringify({ events });
  return SELF.fetch("https://edgeclaw.test/relay/webhook", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-relay-signature":
        options.signature ?? (await signRelayBody(options.secret ?? TEST_RELAY.secret, body)),
    },
    body,
  });
}

async function messages(chat: string): Promise<Array<{ key: string; text: string }>> {
  return (await (
    await fetch(`${fakeRelay()}/_control/messages?chat=${encodeURIComponent(chat)}`)
  ).json()) as Array<{ key: string; text: string }>;
}

async function calls(chat: string): Promise<Array<{ key: string; text: string }>> {
  return (await (
    await fetch(`${fakeRelay()}/_control/calls?chat=${encodeURIComponent(chat)}`)
  ).json()) as Array<{ key: string; text: string }>;
}

async function replyIn(chat: string) {
  return waitFor(async () => ((await messages(chat)).length ? messages(chat) : undefined), 20_000);
}

describe("a channel registered from the test setup", () => {
  it("is a registry entry like the built-in ones", () => {
    expect(channelDefinitions().map((channel) => channel.id)).toContain("relay");
  });

  it("receives a signed webhook and gets a reply end to end", async () => {
    const scenario = newScenario("relay-dm");
    await script(scenario, [{ type: "text", text: "Hello from the agent." }]);
    const from = uniqueId("u");
    const res = await post([{ id: uniqueId("e"), from, text: `hi [scenario:${scenario}]` }]);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted");
    expect(res.headers.get("x-openclaw-delivery-accepted")).toBe("durable");
    const [reply] = await replyIn(from);
    expect(reply!.text).toBe("Hello from the agent.");
  });

  it("refuses a bad signature, a missing one, an oversized and a malformed body, storing nothing", async () => {
    const from = uniqueId("u");
    const event = { id: uniqueId("e"), from, text: "should never arrive" };
    expect((await post([event], { secret: "wrong-secret" })).status).toBe(401);
    const unsigned = await SELF.fetch("https://edgeclaw.test/relay/webhook", {
      method: "POST",
      body: JSON.stringify({ events: [event] }),
    });
    expect(unsigned.status).toBe(401);
    expect(
      (
        await post([], {
          body: JSON.stringify({ events: [event], pad: "x".repeat(RELAY_MAX_BODY_BYTES) }),
        })
      ).status,
    ).toBe(413);
    expect((await post([], { body: "{not json" })).status).toBe(400);
    expect((await post([], { body: JSON.stringify({ events: [{ id: 1 }] }) })).status).toBe(400);
    await settle(1500);
    expect(await calls(from)).toEqual([]);
  });
});

describe("a request carrying several events", () => {
  it("answers 2xx only when all are stored, and each gets one reply", async () => {
    const scenario = newScenario("relay-multi");
    await script(scenario, [
      { type: "text", text: "one" },
      { type: "text", text: "two" },
      { type: "text", text: "three" },
    ]);
    const chats = [uniqueId("g"), uniqueId("g"), uniqueId("g")];
    const events = chats.map((chat) => ({
      id: uniqueId("e"),
      from: uniqueId("u"),
      chat,
      text: `hello [scenario:${scenario}]`,
    }));
    const res = await post(events);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted,accepted,accepted");
    for (const chat of chats) expect(await replyIn(chat)).toHaveLength(1);
    const again = await post(events);
    expect(again.status).toBe(200);
    expect(again.headers.get("x-edgeclaw-ingest")).toBe("duplicate,duplicate,duplicate");
  });

  it("answers 5xx when one accept fails, and the retry stores nothing twice", async () => {
    const scenarios = ["first", "second", "third"].map((name) =>
      newScenario(`relay-partial-${name}`),
    );
    await script(scenarios[0]!, [{ type: "text", text: "first answer" }]);
    await script(scenarios[2]!, [{ type: "text", text: "third answer" }]);
    const chats = [uniqueId("g"), uniqueId("g"), uniqueId("g")];
    const events = chats.map((chat, i) => ({
      id: uniqueId("e"),
      from: uniqueId("u"),
      chat,
      text: `hello [scenario:${scenarios[i]}]`,
    }));
    // The middle event is larger than a Durable Object's SQLite row (2 MB): its SessionDO cannot store it.
    events[1]!.text = `${"x".repeat(2_100_000)} [scenario:${scenarios[1]}]`;
    const res = await post(events);
    expect(res.status).toBe(500);
    expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted,failed,accepted");
    // The platform retries the whole request: the stored two are duplicates, the bad one fails again.
    const retry = await post(events);
    expect(retry.status).toBe(500);
    expect(retry.headers.get("x-edgeclaw-ingest")).toBe("duplicate,failed,duplicate");
    expect((await replyIn(chats[0]!)).map((m) => m.text)).toEqual(["first answer"]);
    expect((await replyIn(chats[2]!)).map((m) => m.text)).toEqual(["third answer"]);
    await settle(1500);
    expect(await messages(chats[0]!)).toHaveLength(1);
    expect(await messages(chats[1]!)).toEqual([]);
    expect(await messages(chats[2]!)).toHaveLength(1);
  });
});

describe("outbound on a platform with an idempotency key", () => {
  it("sends again with the same chunk id when the outcome is unknown; the platform stores one message", async () => {
    const scenario = newScenario("relay-idem");
    await script(scenario, [{ type: "text", text: "Sent once." }]);
    const from = uniqueId("u");
    // The first send is stored, but its answer comes long after the sender stopped waiting (1 s).
    await fetch(`${fakeRelay()}/_control/script`, {
      method: "POST",
      body: JSON.stringify({ chat: from, hangMs: 3_000 }),
    });
    expect(
      (await post([{ id: uniqueId("e"), from, text: `hi [scenario:${scenario}]` }])).status,
    ).toBe(200);
    const sends = await waitFor(async () => {
      const seen = await calls(from);
      return seen.length >= 2 ? seen : undefined;
    }, 20_000);
    expect(sends.map((call) => call.text)).toEqual(["Sent once.", "Sent once."]);
    expect(sends[1]!.key).toBe(sends[0]!.key);
    await settle(2_000);
    expect((await messages(from)).map((m) => m.text)).toEqual(["Sent once."]);
    expect(await calls(from)).toHaveLength(2);
  });
});
