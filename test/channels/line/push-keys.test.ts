import { describe, expect, it } from "vitest";
import { inboundEnvelopeSchema } from "../../../functions/core/envelope.ts";
import type { RoutedEvent } from "../../../durable-objects/session-api.ts";
import { sessionStub } from "../../durable-objects/helpers.ts";
import { eventId, lineCalls, lineId, lineMessages, waitFor } from "./helpers.ts";

/**
 * LINE drops a push whose X-Line-Retry-Key it has seen before (409, nothing sent), and the key is
 * derived from the outbox chunk id. Inbox sequence numbers restart in every session, so a notice id
 * built from the sequence alone is the same in every new session: the second session's first
 * notice (here a command's answer) would be taken for a repeat of the first's and never arrive.
 * (The "biz" account has open DMs: a pairing code would do as well, but the default account holds
 * only three pending pairing requests, shared with every other LINE test running at once.)
 */
function helpCommand(sessionKey: string, user: string): RoutedEvent {
  const envelope = inboundEnvelopeSchema.parse({
    dedupKey: `line:test:${eventId()}`,
    channel: "line",
    accountId: "biz",
    chatType: "direct",
    peerId: user,
    senderId: user,
    text: "/help",
    receivedAt: Date.now(),
    // No reply token (a redelivery, or one long expired): the answer goes by push.
    route: {
      channel: "line",
      accountId: "biz",
      to: user,
      extra: { chatType: "direct", sourceType: "user", mentioned: "0", senderId: user },
    },
  });
  return { envelope, agentId: "main", sessionKey };
}

describe("LINE push retry keys", () => {
  it("the first notices of two new sessions are pushed under different retry keys, and both arrive", async () => {
    const users = [lineId("U"), lineId("U")];
    for (const user of users) {
      const key = `agent:main:line-push-keys:${user}`;
      expect(await sessionStub(key).accept(helpCommand(key, user))).toEqual({ status: "accepted" });
    }
    for (const user of users) {
      const answer = await waitFor(async () => (await lineMessages(user))[0], 40_000);
      expect(answer.text).toContain("/status");
      expect(answer.via).toBe("push");
    }
    const keys = (await Promise.all(users.map((user) => lineCalls("push", user))))
      .flat()
      .map((call) => call.retryKey);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
  }, 60_000);
});
