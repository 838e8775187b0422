import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  smsAccount,
  smsChannelSchema,
  smsSecrets,
} from "../../../functions/channels/sms/config.ts";
import { parseInboundMessage } from "../../../functions/channels/sms/parse.ts";
import type { RoutedEvent } from "../../../durable-objects/session-api.ts";
import { SessionStore } from "../../../durable-objects/session/storage.ts";
import { pruneSessionStorage } from "../../../durable-objects/session/upkeep/retention.ts";
import { sessionStub } from "../../durable-objects/helpers.ts";
import { inboundSms, sid, TEST_TWILIO } from "./helpers.ts";

/**
 * Twilio's X-Twilio-Signature covers the URL and the parameters, never a time: a captured inbound
 * SMS request verifies for as long as the Auth Token that signed it. So its MessageSid is kept
 * `channels.sms.messageSidRetentionDays` (365 by default), far past the 48 h tombstone every other
 * event gets, and a replay within that time stays a duplicate.
 */

const DAY = 86_400_000;

function smsEnvelope(days?: number) {
  const sms = smsChannelSchema.parse({
    accountSid: TEST_TWILIO.accountSid,
    authToken: "t",
    fromNumber: TEST_TWILIO.fromNumber,
    ...(days ? { messageSidRetentionDays: days } : {}),
  });
  const account = smsAccount(sms, "default");
  const result = parseInboundMessage(
    inboundSms({ from: "+15557654321", body: "hi", messageSid: sid() }),
    {
      account,
      secrets: smsSecrets(account, {}),
      receivedAt: 1_000,
    },
  );
  if (result.kind !== "message") throw new Error(`not a message: ${JSON.stringify(result)}`);
  return result.envelope;
}

const policy = {
  activeSessionId: "live",
  archived: true,
  deadLetterMs: 30 * DAY,
  maxEntries: 500,
  archiveMs: 30 * DAY,
};

describe("Twilio SMS replay window", () => {
  it("a replayed MessageSid stays a duplicate after the 48 h tombstone is gone, for the configured days", async () => {
    const key = `agent:main:sms-replay-${crypto.randomUUID()}`;
    await runInDurableObject(sessionStub(key), async (_instance, state) => {
      const store = new SessionStore(state.storage.sql);
      const envelope = smsEnvelope();
      expect(envelope.replayGuardMs).toBe(365 * DAY);
      const event: RoutedEvent = { sessionKey: key, agentId: "main", envelope };
      const seq = store.inbox.insert(event, 0)!;
      expect(seq).not.toBeNull();
      store.inbox.settle(seq, "answer", 1_000);
      pruneSessionStorage(state.storage.sql, policy, 49 * 60 * 60 * 1000);
      expect(store.inbox.insert(event, 50 * 60 * 60 * 1000)).toBeNull();
      pruneSessionStorage(state.storage.sql, policy, 364 * DAY);
      expect(store.inbox.insert(event, 364 * DAY)).toBeNull();
      pruneSessionStorage(state.storage.sql, policy, 366 * DAY);
      expect(store.inbox.insert(event, 366 * DAY)).not.toBeNull();
    });
  });

  it("messageSidRetentionDays sets the window", () => {
    expect(smsEnvelope(30).replayGuardMs).toBe(30 * DAY);
  });
});
