import {
  OutboundRejectedError,
  type OutboundCommand,
  type OutboundReceipt,
} from "../../../../companion/src/outbound.ts";
import { messageIdFor } from "./message-id.ts";
import type { WaSocket } from "./wa-socket.ts";

/**
 * One `/v1/outbound` command on the live socket. A reply's WhatsApp message id is derived from
 * the command id (message-id.ts), so when the companion died after sending and before recording
 * the receipt, the Worker's retry sends the same message again, which WhatsApp clients keep once.
 * `typing` is presence `composing` / `paused` in the chat; `markRead` a read receipt for the
 * message (with its author in a group). Other ops are refused for good.
 */
export async function executeCommand(
  sock: WaSocket,
  command: OutboundCommand,
  remember: (messageId: string, content: Record<string, unknown>) => void,
): Promise<OutboundReceipt> {
  const jid = command.target.conversationId;
  const payload = command.payload;
  switch (command.op) {
    case "send": {
      const text = payload.text;
      if (typeof text !== "string" || !text)
        throw new OutboundRejectedError("invalid_payload", "a send needs payload.text");
      const messageId = messageIdFor(command.commandId);
      const quotedId = command.target.replyToId;
      const participant =
        typeof payload.quotedParticipant === "string" ? payload.quotedParticipant : undefined;
      remember(messageId, { conversation: text });
      const sent = await sock.sendMessage(
        jid,
        { text },
        {
          messageId,
          ...(quotedId
            ? {
                quoted: {
                  key: {
                    remoteJid: jid,
                    id: quotedId,
                    fromMe: false,
                    ...(participant ? { participant } : {}),
                  },
                  message: { conversation: "" },
                },
              }
            : {}),
        },
      );
      return { platformMessageIds: [sent?.key.id ?? messageId], sentAt: Date.now() };
    }
    case "typing": {
      const presence = payload.presence === "paused" ? "paused" : "composing";
      await sock.sendPresenceUpdate(presence, jid);
      return { platformMessageIds: [], sentAt: Date.now() };
    }
    case "markRead": {
      const id = command.target.messageId;
      if (!id)
        throw new OutboundRejectedError("invalid_payload", "markRead needs target.messageId");
      const participant = typeof payload.participant === "string" ? payload.participant : undefined;
      await sock.readMessages([
        { remoteJid: jid, id, fromMe: false, ...(participant ? { participant } : {}) },
      ]);
      return { platformMessageIds: [], sentAt: Date.now() };
    }
    default:
      throw new OutboundRejectedError(
        "unsupported_op",
        `WhatsApp does not take ${command.op} here`,
      );
  }
}
