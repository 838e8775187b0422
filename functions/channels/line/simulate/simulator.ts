import { createHash } from "node:crypto";
import { signLineBody } from "../verify.ts";
import { startFakeLineApi } from "./line-api.ts";
import type { WebhookSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { simulatedId, simulatedSecret } from "../../../../scripts/simulate/secrets.ts";

/**
 * LINE played by the fake Messaging API (functions/channels/line/simulate/line-api.ts): a webhook body with one message
 * event, signed with X-Line-Signature over its raw bytes as LINE signs it, carrying a reply token
 * the fake has issued for that conversation (so the answer goes out by reply, as on LINE). `--from`
 * is a user id (U…), `--group` a group (C…) or multi-person chat (R…) id; other strings are turned
 * into LINE-shaped ids. In groups, `@edgeclaw` in the text is a mention of the bot (LINE's
 * `isSelf`), any other `@name` a mention of someone else. Replies are read back as LINE shows them.
 */
const BOT_USER_ID = `U${"e0".repeat(16)}`;
const DEFAULT_SENDER = `U${"51".repeat(16)}`;
const SELF_MENTION = /@edgeclaw\b/gi;

/** A LINE id (U/C/R + 32 hex) for whatever the user typed: kept when already one, else derived. */
function lineShaped(id: string, prefix: "U" | "C" | "R"): string {
  if (/^[UCR][0-9a-f]{32}$/.test(id)) return id;
  return `${prefix}${createHash("sha256").update(id).digest("hex").slice(0, 32)}`;
}

function conversationOf(message: SimulatedMessage): { to: string; source: Record<string, string> } {
  const from = lineShaped(message.from ?? DEFAULT_SENDER, "U");
  if (!message.group) return { to: from, source: { type: "user", userId: from } };
  const group = lineShaped(message.group, message.group.startsWith("R") ? "R" : "C");
  return group.startsWith("R")
    ? { to: group, source: { type: "room", roomId: group, userId: from } }
    : { to: group, source: { type: "group", groupId: group, userId: from } };
}

function pointAtFake(block: Record<string, unknown>, fakeUrl: string): Record<string, unknown> {
  return { ...block, apiBaseUrl: fakeUrl, dataApiBaseUrl: fakeUrl };
}

export const simulator: WebhookSimulator = {
  id: "line",
  startFake: () => startFakeLineApi(),
  prepare(block, fakeUrl, env) {
    const own = block ?? {};
    const accounts = Object.fromEntries(
      Object.entries(
        (own.accounts as Record<string, Record<string, unknown>> | undefined) ?? {},
      ).map(([id, account]) => [id, pointAtFake(account, fakeUrl)]),
    );
    const secret = simulatedSecret(own.channelSecret, "LINE_CHANNEL_SECRET", env);
    const token = simulatedSecret(
      own.channelAccessToken,
      "LINE_CHANNEL_ACCESS_TOKEN",
      env,
      "line-token-sim-",
    );
    return {
      block: {
        ...pointAtFake(own, fakeUrl),
        ...(Object.keys(accounts).length ? { accounts } : {}),
      },
      env: { ...secret.add, ...token.add },
      secrets: { channelSecret: secret.value },
    };
  },
  async webhook(message, { webhookUrl, secrets, fakeUrl }) {
    const { to, source } = conversationOf(message);
    const replyToken = simulatedId("rt");
    // LINE issues the token with the event; the fake must know it to accept the reply.
    await fetch(`${fakeUrl}/_control/reply-token`, {
      method: "POST",
      body: JSON.stringify({ replyToken, to }),
    });
    const mentionees = message.group
      ? [...message.text.matchAll(/(^|[^\w@])(@[^\s@]{1,40})/g)].map((m) => {
          const self = new RegExp(SELF_MENTION.source, "i").test(m[2]!);
          return {
            index: m.index! + m[1]!.length,
            length: m[2]!.length,
            type: "user",
            ...(self ? { userId: BOT_USER_ID, isSelf: true } : { isSelf: false }),
          };
        })
      : [];
    const body = JSON.stringify({
      destination: BOT_USER_ID,
      events: [
        {
          type: "message",
          mode: "active",
          timestamp: Date.now(),
          source,
          webhookEventId: simulatedId("01SIM"),
          deliveryContext: { isRedelivery: false },
          replyToken,
          message: {
            type: "text",
            id: String(Date.now()) + String(Math.floor(Math.random() * 1000)),
            quoteToken: simulatedId("q"),
            text: message.text,
            ...(mentionees.length ? { mention: { mentionees } } : {}),
          },
        },
      ],
    });
    return new Request(webhookUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-line-signature": await signLineBody(secrets.channelSecret!, body),
      },
      body,
    });
  },
  async replies(fakeUrl, message) {
    const { to } = conversationOf(message);
    const res = await fetch(`${fakeUrl}/_control/messages?to=${encodeURIComponent(to)}`);
    return ((await res.json()) as Array<{ text: string }>).map((m) => m.text);
  },
};
