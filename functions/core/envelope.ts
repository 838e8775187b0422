import * as z from "zod";

/**
 * Where a reply goes. Stored with every inbound event, so a session that serves several channels
 * (dmScope "main") answers each message on the route it came from.
 */
export const replyRouteSchema = z.object({
  channel: z.string().min(1),
  accountId: z.string().min(1).default("default"),
  /** Platform address of the conversation (Slack channel id, LINE userId/groupId, …). */
  to: z.string().min(1),
  /** Thread to post in (Slack thread_ts, Teams conversation reply chain, …). */
  threadId: z.string().optional(),
  /** Platform id of the message being answered, for reply-to/quote and reactions. */
  replyToMessageId: z.string().optional(),
  /** Channel-specific extras a sender needs (Slack response_url, LINE replyToken, …). */
  extra: z.record(z.string(), z.string()).optional(),
});
export type ReplyRoute = z.infer<typeof replyRouteSchema>;

export const attachmentSchema = z.object({
  name: z.string().optional(),
  mimeType: z.string().optional(),
  sizeBytes: z.number().int().nonnegative().optional(),
  url: z.string().optional(),
  /** Text extracted or downloaded for the model, already bounded by `mediaMaxMb`. */
  text: z.string().optional(),
  /**
   * Bytes already in the media store (the HTTP API stores a request's images before it is
   * accepted). Trusted only when `ref` is exactly the key this event's attachment would get
   * (functions/media/store.ts mediaKey), so no event can name another session's media.
   */
  stored: z
    .object({
      ref: z.string().min(1).max(300),
      mimeType: z.string().min(1),
      sizeBytes: z.number().int().nonnegative(),
    })
    .optional(),
});

export type InboundAttachment = z.infer<typeof attachmentSchema>;

export const chatTypeSchema = z.enum(["direct", "group", "channel"]);
export type ChatType = z.infer<typeof chatTypeSchema>;

/**
 * One inbound event, normalised. Every channel adapter (and the companion's internal ingress)
 * produces exactly this; routing and SessionDO never look at a platform payload.
 */
export const inboundEnvelopeSchema = z.object({
  /**
   * Idempotency key, stable across the platform's retries: its event id (`matrix:a:$ev`), or the
   * message's own id where that decides every duplicate case alone (`slack:T1:C1:<ts>`).
   */
  dedupKey: z.string().min(1).max(512),
  /**
   * Further keys that name the same event, each stored as a key row of its own. No parser sends
   * them since the message ids became the dedup keys; they are still honoured (a companion of an
   * earlier release sends them) and looked up (rows stored before, for their 48 h).
   */
  aliasKeys: z.array(z.string().min(1).max(512)).max(8).optional(),
  /**
   * Set when `dedupKey` names a post that more than one delivery carries (Slack's `message` and
   * `app_mention` twins share `<channel>:<ts>`): this delivery's own key (`slack:T1:Ev123`). The
   * dedup key then finds the twin instead of ending the accept, so a mention only this copy carries
   * is not lost (inbox/store.ts); this key is looked up, not stored, except as the key of a twin
   * that must be stored on its own; and it still finds the rows stored under event ids before.
   */
  deliveryKey: z.string().min(1).max(512).optional(),
  /**
   * Keep `dedupKey` this long after acceptance, beyond the 48 h tombstone: for platforms whose
   * signature carries no timestamp (Twilio), so a captured request replayed later stays a duplicate.
   */
  replayGuardMs: z
    .number()
    .int()
    .positive()
    .max(10 * 366 * 86_400_000)
    .optional(),
  kind: z.enum(["message", "system"]).default("message"),
  channel: z.string().min(1),
  accountId: z.string().min(1).default("default"),
  chatType: chatTypeSchema,
  /** The conversation: DM partner / group / channel id on the platform. */
  peerId: z.string().min(1),
  /** Parent conversation of a thread (used by binding tier 2 and session keys). */
  parentPeerId: z.string().optional(),
  threadId: z.string().optional(),
  /** Workspace/team/guild the conversation belongs to (Slack team id, Discord guild id). */
  teamId: z.string().optional(),
  senderId: z.string().min(1),
  senderName: z.string().optional(),
  senderIsBot: z.boolean().optional(),
  /** The sender's roles in this conversation (Discord guild role ids): group `roles` allowlists and role bindings. */
  senderRoles: z.array(z.string().min(1).max(64)).max(250).optional(),
  messageId: z.string().optional(),
  text: z.string().max(200_000),
  attachments: z.array(attachmentSchema).max(32).optional(),
  /** The platform flagged a native mention of the bot (or a reply to it). */
  wasMentioned: z.boolean().optional(),
  /**
   * A session the channel chose instead of the conversation's own: Slack slash commands run in
   * `slack:slash:<userId>` (OpenClaw's native command sessions). Becomes `agent:<agentId>:<value>`.
   */
  sessionScope: z
    .string()
    .regex(/^[a-z0-9][a-z0-9:_.-]*$/i)
    .max(200)
    .optional(),
  /** Unix ms at which the gateway received the event. */
  receivedAt: z.number().int().nonnegative(),
  route: replyRouteSchema,
});
export type InboundEnvelope = z.infer<typeof inboundEnvelopeSchema>;
export type InboundEnvelopeInput = z.input<typeof inboundEnvelopeSchema>;

/**
 * An envelope a channel's parser assembled, checked against the schema before anything keeps it.
 * One that fails (a platform field past a bound, a parser bug) is dropped with the first offending
 * field named, and acknowledged: the platform resending it would not make it valid.
 */
export function checkedEnvelope(
  input: InboundEnvelopeInput,
): { envelope: InboundEnvelope } | { dropped: string } {
  const parsed = inboundEnvelopeSchema.safeParse(input);
  if (parsed.success) return { envelope: parsed.data };
  const first = parsed.error.issues[0];
  return {
    dropped: `envelope invalid: ${first ? `${first.path.join(".") || "(envelope)"}: ${first.message}` : "?"}`,
  };
}

/** Platform text quoted inside an envelope (a system event's description): at most `max` characters, a cut marked with "…". */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
