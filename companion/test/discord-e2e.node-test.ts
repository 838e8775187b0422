import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { messageCreateData } from "../../functions/channels/discord/simulate/discord-gateway.ts";
import {
  channelMessages,
  startDiscordStack,
  waitUntil,
  type DiscordStack,
} from "./discord-stack.ts";

/**
 * Discord end to end with every real part: fake Gateway → companion process (connector, outbox,
 * lease, state) → `npm run dev` Worker (parse, durable accept, demo model) → reply in the fake
 * Discord REST API. Then the companion is killed with SIGKILL in the middle of a burst and started
 * again on the same data directory: every message gets exactly one reply (nothing lost: the
 * connector RESUMEs from the sequence it had stored, and Discord replays the rest; nothing doubled:
 * the Worker deduplicates by message id).
 */

const USERS = Array.from({ length: 30 }, (_, i) => String(1200000000000000100n + BigInt(i)));
const dmChannel = (i: number) => String(1700000000000000000n + BigInt(i));

function dm(i: number, text: string) {
  return messageCreateData(String(1800000000000000000n + BigInt(i)), text, {
    channel_id: dmChannel(i),
    guild_id: undefined,
    author: { id: USERS[i]!, username: `user${i}` },
  });
}

describe("Discord through the companion, end to end", { timeout: 600_000 }, () => {
  let stack: DiscordStack;
  before(async () => {
    stack = await startDiscordStack({ allowFrom: USERS });
  });
  after(async () => stack?.stop());

  it("a MESSAGE_CREATE from the Gateway becomes one reply through Discord REST", async () => {
    await waitUntil(async () => stack.gateway.live, 120_000, "the companion's Gateway session");
    // EDGECLAW_DEV_COMPANION=0: dev leaves the companion to this test and says which key to run it with.
    assert.match(
      stack.worker.output(),
      /Companion: not started for Discord; run one with EDGECLAW_WORKER_URL=http:\/\/127\.0\.0\.1:\d+ and ingress key "dc" from the config/,
    );
    stack.gateway.dispatch("MESSAGE_CREATE", dm(0, "hello edgeclaw"));
    const replies = await waitUntil(
      async () => {
        const messages = await channelMessages(stack, dmChannel(0));
        return messages.length ? messages : undefined;
      },
      60_000,
      "the reply",
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal(
      (await channelMessages(stack, dmChannel(0))).length,
      1,
      `one reply: ${JSON.stringify(replies)}`,
    );
  });

  it("SIGKILL mid-burst and a restart: every message answered exactly once", async () => {
    const live = await waitUntil(async () => stack.gateway.live, 60_000, "a live session");
    const burst = Array.from({ length: 20 }, (_, k) => k + 1);
    for (const i of burst.slice(0, 8))
      stack.gateway.dispatch("MESSAGE_CREATE", dm(i, `burst ${i}`), live);
    await stack.companion.kill();
    // What happens while the companion is down is kept by Discord for the RESUME.
    for (const i of burst.slice(8))
      stack.gateway.queue(live.sessionId!, "MESSAGE_CREATE", dm(i, `burst ${i}`));
    await stack.restartCompanion();
    const resumed = await waitUntil(
      async () =>
        stack.gateway.connections.find(
          (c) => c !== live && c.received.some((frame) => frame.op === 6),
        ),
      120_000,
      "a RESUME after the restart",
    );
    const resume = resumed.received.find((frame) => frame.op === 6) as {
      d: { session_id: string };
    };
    assert.equal(resume.d.session_id, live.sessionId);
    for (const i of burst)
      await waitUntil(
        async () => ((await channelMessages(stack, dmChannel(i))).length ? true : undefined),
        180_000,
        `the reply to burst ${i}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const counts = await Promise.all(
      burst.map(async (i) => (await channelMessages(stack, dmChannel(i))).length),
    );
    assert.deepEqual(
      counts,
      burst.map(() => 1),
      "exactly one reply per message",
    );
  });
});
