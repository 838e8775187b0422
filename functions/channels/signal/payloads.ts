import * as z from "zod";

/**
 * What the companion's connector forwards for one envelope signal-cli's `receive` answered
 * (functions/channels/signal/companion/connector.ts): the envelope as signal-cli serialises it
 * (JsonMessageEnvelope: `sourceNumber`, `sourceUuid`, `timestamp`, `dataMessage`, `editMessage`,
 * …), who the bot is, and the text of small text attachments the connector read with
 * `getAttachment` (keyed by attachment id). Only the fields the Worker reads are listed; the rest
 * passes (`loose`).
 */

const mentionSchema = z
  .object({
    number: z.string().max(32).nullish(),
    uuid: z.string().max(64).nullish(),
    start: z.number().int().nonnegative().default(0),
    length: z.number().int().nonnegative().default(1),
  })
  .loose();

const attachmentSchema = z
  .object({
    id: z.string().max(255).nullish(),
    contentType: z.string().max(255).nullish(),
    filename: z.string().max(1024).nullish(),
    size: z.number().int().nonnegative().nullish(),
    caption: z.string().max(10_000).nullish(),
  })
  .loose();

const dataMessageSchema = z
  .object({
    timestamp: z.number().int().nonnegative(),
    message: z.string().max(200_000).nullish(),
    mentions: z.array(mentionSchema).max(100).nullish(),
    attachments: z.array(attachmentSchema).max(32).nullish(),
    groupInfo: z
      .object({ groupId: z.string().min(1).max(255), type: z.string().max(32).nullish() })
      .loose()
      .nullish(),
    quote: z
      .object({
        id: z.number().int().nonnegative(),
        authorNumber: z.string().max(32).nullish(),
        authorUuid: z.string().max(64).nullish(),
      })
      .loose()
      .nullish(),
    reaction: z
      .object({
        emoji: z.string().max(64),
        targetAuthorNumber: z.string().max(32).nullish(),
        targetAuthorUuid: z.string().max(64).nullish(),
        targetSentTimestamp: z.number().int().nonnegative(),
        isRemove: z.boolean().default(false),
      })
      .loose()
      .nullish(),
    remoteDelete: z.object({ timestamp: z.number().int() }).loose().nullish(),
  })
  .loose();
export type SignalDataMessage = z.infer<typeof dataMessageSchema>;

export const signalEnvelopeSchema = z
  .object({
    sourceNumber: z.string().max(32).nullish(),
    sourceUuid: z.string().max(64).nullish(),
    sourceName: z.string().max(500).nullish(),
    timestamp: z.number().int().nonnegative(),
    dataMessage: dataMessageSchema.nullish(),
    editMessage: z
      .object({ targetSentTimestamp: z.number().int(), dataMessage: dataMessageSchema })
      .loose()
      .nullish(),
  })
  .loose();
export type SignalEnvelope = z.infer<typeof signalEnvelopeSchema>;

export const signalSocketPayloadSchema = z.object({
  envelope: signalEnvelopeSchema,
  /** The bot: its number (the signal-cli account) and, when known, its uuid. */
  self: z.object({ number: z.string().min(1).max(32), uuid: z.string().max(64).optional() }),
  /** attachment id → its text, for text attachments the connector read (bounded by mediaMaxMb). */
  attachmentText: z.record(z.string(), z.string().max(200_000)).default({}),
});
export type SignalSocketPayload = z.infer<typeof signalSocketPayloadSchema>;
