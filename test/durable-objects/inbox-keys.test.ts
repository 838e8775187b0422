import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { slackAccount, slackChannelSchema } from "../../functions/channels/slack/config.ts";
import { classifySlackRequest } from "../../functions/channels/slack/classify.ts";
import { envelopeFromEvent } from "../../functions/channels/slack/parse.ts";
import { parseTelegramUpdate } from "../../functions/channels/telegram/parse.ts";
import {
  telegramAccount,
  telegramChannelSchema,
} from "../../functions/channels/telegram/config.ts";
import type { InboundEnvelope } from "../../functions/core/envelope.ts";
import { sessionStub } from "./helpers.ts";

/**
 * The inbox's key rows (inbox/store.ts, insert): one per message — its dedup key, the message's
 * own id — while every duplicate stays one. Slack's `message` and `app_mention` twins of one post
 * share that key and still collapse keeping the mention; rows stored before the change (an event
 * id as the key, the message id as an alias row) still catch their retries. The envelopes come
 * from the real parsers; "old" ones are shaped as the parsers built them before.
 */

const account = slackAccount(slackChannelSchema.parse({ replyToMode: "all" }), "default");
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** A Slack post's delivery as the Worker parses it; the bot's ids unknown (no `authorizations`). */
function slackCopy(
  sessionKey: string,
  type: "message" | "app_mention",
  eventId: string,
  ts: string,
): RoutedEvent {
  const request = classifySlackRequest(
    bytes({
      type: "event_callback",
      team_id: "T1",
      event_id: eventId,
      event: { type, channel: "C1", channel_type: "channel", user: "U1", text: "<@UBOT> hi", ts },
    }),
    "application/json",
  );
  if (request.kind !== "event") throw new Error("not an event");
  const parsed = envelopeFromEvent(request.callback, { account, bot: {}, receivedAt: 1 });
  if ("dropped" in parsed) throw new Error(parsed.dropped);
  return { envelope: parsed.envelope, agentId: "main", sessionKey };
}

/** The same delivery as the parser built it before: keyed by its event id, the post as an alias. */
function oldShape(event: RoutedEvent): RoutedEvent {
  const { dedupKey, deliveryKey, ...rest } = event.envelope;
  const envelope: InboundEnvelope = { ...rest, dedupKey: deliveryKey!, aliasKeys: [dedupKey] };
  return { ...event, envelope };
}

function keyRows(state: DurableObjectState) {
  const sql = state.storage.sql;
  return {
    keys: sql
      .exec<{ dedup_key: string }>(`SELECT dedup_key FROM inbox ORDER BY seq`)
      .toArray()
      .map((row) => row.dedup_key),
    aliases: sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM inbox_alias`).one().n,
  };
}

function inStore<T>(
  sessionKey: string,
  body: (store: SessionStore, state: DurableObjectState) => T,
): Promise<T> {
  return runInDurableObject(sessionStub(sessionKey), (_instance, state) =>
    body(new SessionStore(state.storage.sql), state),
  );
}

describe("inbox key rows", () => {
  for (const order of ["message first", "app_mention first"] as const) {
    it(`stores one key row for a Slack post whose twins come ${order}, keeping the mention`, async () => {
      const key = `agent:main:inbox-keys-twins-${order.split(" ")[0]}`;
      const message = slackCopy(key, "message", "EvM1", "10.000100");
      const mention = slackCopy(key, "app_mention", "EvA1", "10.000100");
      expect(message.envelope.wasMentioned).toBe(false);
      expect(mention.envelope.wasMentioned).toBe(true);
      await inStore(key, (store, state) => {
        const [first, second] = order === "message first" ? [message, mention] : [mention, message];
        expect(store.inbox.insert(first, 1_000)).not.toBeNull();
        expect(store.inbox.insert(second, 1_001)).toBeNull();
        // Slack's retries of either copy (same event_id, same channel and ts).
        expect(store.inbox.insert(first, 1_002)).toBeNull();
        expect(store.inbox.insert(second, 1_003)).toBeNull();
        expect(keyRows(state)).toEqual({ keys: ["slack:T1:C1:10.000100"], aliases: 0 });
        const row = store.inbox.byKey("slack:T1:C1:10.000100")!;
        expect(row.event.envelope.wasMentioned).toBe(true);
        expect(row.event.envelope.route.extra?.mentioned).toBe("1");
      });
    });
  }

  it("stores the mention twin of a post settled unanswered once, under its event id", async () => {
    const key = "agent:main:inbox-keys-late-mention";
    const message = slackCopy(key, "message", "EvM2", "11.000100");
    const mention = slackCopy(key, "app_mention", "EvA2", "11.000100");
    await inStore(key, (store, state) => {
      const seq = store.inbox.insert(message, 1_000)!;
      store.inbox.settle(seq, null, 1_100); // kept as context: nobody was answered
      const own = store.inbox.insert(mention, 1_200);
      expect(own).not.toBeNull();
      expect(store.inbox.bySeq(own!)!.event.envelope).toMatchObject({
        dedupKey: "slack:T1:EvA2",
        wasMentioned: true,
      });
      // Retries of both copies, and of the twin again, stay duplicates.
      expect(store.inbox.insert(mention, 1_300)).toBeNull();
      expect(store.inbox.insert(message, 1_301)).toBeNull();
      expect(keyRows(state)).toEqual({
        keys: ["slack:T1:C1:11.000100", "slack:T1:EvA2"],
        aliases: 0,
      });
    });
  });

  it("catches retries and twins of Slack events stored before (event id key, post alias)", async () => {
    const key = "agent:main:inbox-keys-old-rows";
    await inStore(key, (store, state) => {
      // A post stored before the change, untriaged: a retry after it is a duplicate, and the
      // mention twin arriving after it still gives the stored copy its mention.
      const message = slackCopy(key, "message", "EvM3", "12.000100");
      const seq = store.inbox.insert(oldShape(message), 1_000)!;
      expect(store.inbox.insert(message, 1_001)).toBeNull();
      expect(store.inbox.insert(slackCopy(key, "app_mention", "EvA3", "12.000100"), 1_002)).toBe(
        null,
      );
      expect(store.inbox.bySeq(seq)!.event.envelope.wasMentioned).toBe(true);

      // A post settled unanswered before, whose mention twin was stored on its own (under its
      // event id, no alias row: the post's was taken): a retry of that twin after the change.
      const earlier = slackCopy(key, "message", "EvM4", "13.000100");
      const twin = slackCopy(key, "app_mention", "EvA4", "13.000100");
      store.inbox.settle(store.inbox.insert(oldShape(earlier), 1_100)!, null, 1_101);
      const twinSeq = store.inbox.insert(oldShape(twin), 1_102);
      expect(store.inbox.bySeq(twinSeq!)!.dedupKey).toBe("slack:T1:EvA4");
      expect(store.inbox.insert(twin, 1_103)).toBeNull();
      expect(store.inbox.insert(earlier, 1_104)).toBeNull();
      expect(keyRows(state)).toEqual({
        keys: ["slack:T1:EvM3", "slack:T1:EvM4", "slack:T1:EvA4"],
        aliases: 2,
      });
    });
  });

  it("catches a retry of a Telegram message stored before (update id key, message alias)", async () => {
    const key = "agent:main:inbox-keys-telegram";
    const parsed = parseTelegramUpdate(
      bytes({
        update_id: 500,
        message: {
          message_id: 7,
          date: 1,
          chat: { id: 42, type: "private" },
          from: { id: 42, is_bot: false, first_name: "Ada" },
          text: "hi",
        },
      }),
      { account: telegramAccount(telegramChannelSchema.parse({}), "default"), receivedAt: 1 },
    );
    if (parsed.kind !== "envelopes") throw new Error(parsed.kind);
    const envelope = parsed.envelopes[0]!;
    const event: RoutedEvent = { envelope, agentId: "main", sessionKey: key };
    const before: RoutedEvent = {
      ...event,
      envelope: {
        ...envelope,
        dedupKey: "telegram:acct:default:u500",
        aliasKeys: [envelope.dedupKey],
      },
    };
    await inStore(key, (store, state) => {
      expect(store.inbox.insert(before, 1_000)).not.toBeNull();
      expect(store.inbox.insert(event, 1_001)).toBeNull();
      // After the change, one key row a message.
      const next = { ...envelope, dedupKey: "telegram:acct:default:42:8" };
      expect(store.inbox.insert({ ...event, envelope: next }, 1_002)).not.toBeNull();
      expect(keyRows(state)).toEqual({
        keys: ["telegram:acct:default:u500", "telegram:acct:default:42:8"],
        aliases: 1,
      });
    });
  });
});
