import * as z from "zod";

/**
 * What the companion's Baileys connector forwards for one event (companion/connector.ts): the
 * `WAMessage` of a `messages.upsert` (type "notify") or one entry of `messages.reaction`, as
 * Baileys emits them, made JSON-safe (byte fields — media keys, thumbnails, hashes — dropped, a
 * Long timestamp as a number), plus who the linked device is. Only the fields the Worker reads are
 * listed; the rest passes (`loose`).
 */

const jid = z.string().min(1).max(255);

export const waKeySchema = z
  .object({
    remoteJid: jid,
    id: z.string().min(1).max(128),
    fromMe: z.boolean().nullish(),
    participant: jid.nullish(),
    /** Baileys 7: the other address form of the chat / sender (phone number beside a LID). */
    remoteJidAlt: jid.nullish(),
    participantAlt: jid.nullish(),
    addressingMode: z.string().max(16).nullish(),
  })
  .loose();
export type WaKey = z.infer<typeof waKeySchema>;

const contextInfoSchema = z
  .object({
    mentionedJid: z.array(jid).max(1024).nullish(),
    /** The author of the quoted message (a reply to the bot names the bot here). */
    participant: jid.nullish(),
    stanzaId: z.string().max(128).nullish(),
  })
  .loose();

const mediaSchema = z
  .object({
    caption: z.string().max(200_000).nullish(),
    mimetype: z.string().max(255).nullish(),
    fileName: z.string().max(1000).nullish(),
    fileLength: z.union([z.number(), z.string()]).nullish(),
    ptt: z.boolean().nullish(),
    contextInfo: contextInfoSchema.nullish(),
  })
  .loose();
export type WaMedia = z.infer<typeof mediaSchema>;

/** The subset of `proto.IMessage` read here; a nested edit carries the same shape. */
const messageFields = {
  conversation: z.string().max(200_000).nullish(),
  extendedTextMessage: z
    .object({ text: z.string().max(200_000).nullish(), contextInfo: contextInfoSchema.nullish() })
    .loose()
    .nullish(),
  imageMessage: mediaSchema.nullish(),
  videoMessage: mediaSchema.nullish(),
  audioMessage: mediaSchema.nullish(),
  documentMessage: mediaSchema.nullish(),
  stickerMessage: mediaSchema.nullish(),
  locationMessage: z
    .object({
      degreesLatitude: z.number().nullish(),
      degreesLongitude: z.number().nullish(),
      name: z.string().max(1000).nullish(),
    })
    .loose()
    .nullish(),
  reactionMessage: z
    .object({ key: waKeySchema.nullish(), text: z.string().max(64).nullish() })
    .loose()
    .nullish(),
};

const editedSchema = z.object(messageFields).loose();

export const waContentSchema = z
  .object({
    ...messageFields,
    /** type 14 = MESSAGE_EDIT (`editedMessage` is the new content), 0 = REVOKE (a delete). */
    protocolMessage: z
      .object({
        type: z.union([z.number(), z.string()]).nullish(),
        key: waKeySchema.nullish(),
        editedMessage: editedSchema.nullish(),
      })
      .loose()
      .nullish(),
    ephemeralMessage: z.object({ message: editedSchema.nullish() }).loose().nullish(),
    viewOnceMessage: z.object({ message: editedSchema.nullish() }).loose().nullish(),
  })
  .loose();
export type WaContent = z.infer<typeof waContentSchema>;

export const waMessageSchema = z
  .object({
    key: waKeySchema,
    message: waContentSchema.nullish(),
    pushName: z.string().max(255).nullish(),
    messageTimestamp: z.number().int().nonnegative().nullish(),
  })
  .loose();
export type WaMessage = z.infer<typeof waMessageSchema>;

const selfSchema = z.object({
  /** The linked device's own jid (`15551234567:12@s.whatsapp.net`) and LID when known. */
  id: jid,
  lid: jid.optional(),
});

export const whatsappSocketPayloadSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("message"), self: selfSchema, message: waMessageSchema }),
  z.object({
    type: z.literal("reaction"),
    self: selfSchema,
    /** `messages.reaction`: the reacted-to message's key, and the reaction (its own key names the reactor). */
    key: waKeySchema,
    reaction: z.object({ key: waKeySchema.nullish(), text: z.string().max(64).nullish() }).loose(),
  }),
]);
export type WhatsAppSocketPayload = z.infer<typeof whatsappSocketPayloadSchema>;
