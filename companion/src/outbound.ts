import * as z from "zod";

/**
 * `POST /v1/outbound` (Worker → companion, signed with the outbound key, `Idempotency-Key` =
 * commandId): a send that needs the live session (WhatsApp, Signal, IRC, … — none of the first four
 * connectors; their replies go Worker → platform REST). A connector that can send implements
 * OutboundSender; the HTTP layer keeps commandId → answer so a retried command is never re-sent.
 */
export const outboundCommandSchema = z.object({
  v: z.literal(1),
  commandId: z.string().min(1).max(200),
  channel: z.string().min(1),
  accountId: z.string().min(1),
  op: z.enum(["send", "edit", "delete", "react", "typing", "markRead"]),
  target: z.object({
    conversationId: z.string().min(1),
    threadId: z.string().optional(),
    replyToId: z.string().optional(),
    messageId: z.string().optional(),
  }),
  payload: z.record(z.string(), z.unknown()).default({}),
});
export type OutboundCommand = z.infer<typeof outboundCommandSchema>;

export interface OutboundReceipt {
  platformMessageIds: string[];
  sentAt: number;
}

/** The platform refused the command for good (blocked, forbidden, too large): answered 422, never retried. */
export class OutboundRejectedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The account's session is not live right now (not linked, reconnecting): answered 409, retried later. */
export class OutboundNotConnectedError extends Error {}

export interface OutboundSender {
  send(command: OutboundCommand): Promise<OutboundReceipt>;
}

export function canSend(connector: unknown): connector is OutboundSender {
  return (
    typeof connector === "object" &&
    connector !== null &&
    typeof (connector as { send?: unknown }).send === "function"
  );
}
