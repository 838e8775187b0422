import { createHash } from "node:crypto";
import { BOT_MESSAGE_ID_PREFIX } from "../parse.ts";

/**
 * The WhatsApp message id of one part of an outbound command: `3EB0EC` + 16 hex digits of
 * SHA-256(commandId, part). WhatsApp ids are the sender's choice (Baileys' own are `3EB0` + hex);
 * deriving them from the command makes a resend after a lost answer or a crash the same message,
 * which WhatsApp clients keep once, and lets the parser tell the bot's replies from the owner's
 * own messages in the self chat (parse.ts BOT_MESSAGE_ID_PREFIX).
 */
export function messageIdFor(commandId: string, part = 0): string {
  const digest = createHash("sha256").update(`${commandId}\u0000${part}`).digest("hex");
  return `${BOT_MESSAGE_ID_PREFIX}${digest.slice(0, 16).toUpperCase()}`;
}
