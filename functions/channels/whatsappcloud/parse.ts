import { checkedEnvelope, clip, type InboundEnvelope } from "../../core/envelope.ts";
import { firstIssue, parseJsonBody } from "../parse-json-body.ts";
import type { WhatsAppCloudAccount } from "./config.ts";
import { describeMessage } from "./content.ts";
import {
  whatsappBodySchema,
  whatsappChangeSchema,
  whatsappMessageSchema,
  type WhatsAppChange,
  type WhatsAppMessage,
} from "./payloads.ts";

/**
 * A verified Cloud API webhook body → envelopes, one per user message (a request may carry several
 * entries, changes and messages).
 *
 * - Dedup key: the message's `wamid`, which Meta keeps when it redelivers, scoped by the number.
 * - `statuses` (sent / delivered / read / failed receipts of the bot's own messages) are not events
 *   from a sender: acknowledged and dropped, never a run.
 * - A message older than a day (its own `timestamp`) is dropped (MAX_AGE_SECONDS).
 * - Text, media, location, contacts and interactive replies are messages (content.ts); a reaction
 *   and a `system` notice (the user changed their number) are `kind: "system"`: the same access
 *   checks as a message from that sender, and only ever context.
 * - DMs: peer = sender = the user's number in E.164 (`+<wa_id>`, what `allowFrom` lists). Groups
 *   (Cloud API groups, `group_id`): peer = the group, sender = the member. The Cloud API marks no
 *   mention of the business; a reply to one of its messages counts as one.
 */

/** The body's changes: each a `messages` change, or why it is not taken. */
export function parseWhatsAppBody(
  raw: Uint8Array,
): { changes: Array<WhatsAppChange | string> } | { reason: string } {
  const body = parseJsonBody(raw, whatsappBodySchema, "a WhatsApp Cloud API webhook body");
  if (!body.ok) return { reason: body.reason };
  return {
    changes: body.value.entry.flatMap((entry) =>
      entry.changes.map((change) => {
        const parsed = whatsappChangeSchema.safeParse(change);
        return parsed.success ? parsed.data : `change: ${firstIssue(parsed.error)}`;
      }),
    ),
  };
}

/**
 * Meta retries a webhook it could not deliver for up to 7 days, and the signature covers no time,
 * while the dedup record that makes a redelivery a duplicate is kept 48 h
 * (durable-objects/session/storage.ts TOMBSTONE_MS): a message older than a day is dropped (200,
 * nothing stored) so the window always closes before its record goes.
 */
const MAX_AGE_SECONDS = 24 * 3600;

export type MessageResult = { envelope: InboundEnvelope } | { dropped: string };

export function envelopesFromChange(
  change: WhatsAppChange,
  account: WhatsAppCloudAccount,
  receivedAt: number,
): MessageResult[] {
  const { metadata, contacts, messages = [], statuses = [] } = change.value;
  const number = metadata.phone_number_id;
  return [
    ...statuses.map((s) => ({ dropped: `status ${s.status}` })),
    ...messages.map((raw): MessageResult => {
      const parsed = whatsappMessageSchema.safeParse(raw);
      if (!parsed.success) return { dropped: `message: ${firstIssue(parsed.error)}` };
      const message = parsed.data as WhatsAppMessage;
      if (receivedAt / 1000 - Number(message.timestamp) > MAX_AGE_SECONDS)
        return { dropped: "message older than a day" };
      const sender = `+${message.from}`;
      const group = message.group_id;
      const name = contacts?.find((c) => c.wa_id === message.from)?.profile?.name;
      const content = describeMessage(message, account);
      if (!content) return { dropped: `type ${message.type}` };
      const replyToBot =
        !!message.context?.from &&
        message.context.from.replace(/\D/g, "") ===
          metadata.display_phone_number?.replace(/\D/g, "");
      return checkedEnvelope({
        dedupKey: `whatsappcloud:${number}:${message.id}`,
        kind: content.system ? "system" : "message",
        channel: "whatsappcloud",
        accountId: account.accountId,
        chatType: group ? "group" : "direct",
        peerId: group ?? sender,
        senderId: sender,
        senderName: name && clip(name, 200),
        messageId: content.system ? undefined : message.id,
        text: content.text,
        attachments: content.attachments,
        wasMentioned: !content.system && !!group && replyToBot,
        receivedAt,
        route: {
          channel: "whatsappcloud",
          accountId: account.accountId,
          // The Cloud API's `to`: the user's wa_id, or the group id with recipient_type "group".
          to: group ?? message.from,
          replyToMessageId: message.id,
          // What a read receipt and the typing indicator name (progress.ts).
          extra: {
            chatType: group ? "group" : "direct",
            phoneNumberId: number,
            messageId: message.id,
          },
        },
      });
    }),
  ];
}
