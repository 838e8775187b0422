import * as z from "zod";

/**
 * The webhook body Meta posts for a WhatsApp Business Account (Cloud API webhooks reference, the
 * `messages` field), read loosely: unknown fields pass, and a change or message this channel does
 * not take is dropped alone rather than failing the request. Only what routing rests on is checked
 * here (the number, the sender, the wamid, the time); the content of a message is read by
 * content.ts with every field optional, and the envelope it makes is checked whole
 * (checkedEnvelope), which bounds every length.
 *
 * { object: "whatsapp_business_account", entry: [{ id: <WABA id>, changes: [{ field: "messages",
 *   value: { metadata: { display_phone_number, phone_number_id }, contacts?: [{ profile: { name },
 *   wa_id }], messages?: [{ from, id: "wamid…", timestamp: "<unix s>", type, group_id?, context?,
 *   <type>: {…} }], statuses?: [{ id, status: sent|delivered|read|failed }] } }] }] }
 */

const str = z.string();
const opt = str.optional();
const digits = str.regex(/^\d{1,32}$/);

export const whatsappBodySchema = z.looseObject({
  object: z.literal("whatsapp_business_account"),
  // Loose changes: one odd change must not reject its neighbours.
  entry: z.array(z.looseObject({ changes: z.array(z.unknown()).max(100) })).max(100),
});

export const whatsappMessageSchema = z.looseObject({
  from: digits,
  id: str.min(1).max(256),
  timestamp: str.regex(/^\d{1,12}$/),
  type: str,
  group_id: opt,
  context: z.looseObject({ from: opt }).optional(),
});
/** A message: the checked fields, and the type's own object (`text`, `image`, …) read loosely. */
export type WhatsAppMessage = z.infer<typeof whatsappMessageSchema> & Record<string, unknown>;

export const whatsappChangeSchema = z.looseObject({
  field: z.literal("messages"),
  value: z.looseObject({
    metadata: z.looseObject({ display_phone_number: opt, phone_number_id: digits }),
    contacts: z
      .array(z.looseObject({ wa_id: opt, profile: z.looseObject({ name: opt }).optional() }))
      .max(100)
      .optional(),
    // Loose messages again: an odd one is dropped alone.
    messages: z.array(z.unknown()).max(100).optional(),
    statuses: z
      .array(z.looseObject({ id: opt, status: opt }))
      .max(1000)
      .optional(),
  }),
});
export type WhatsAppChange = z.infer<typeof whatsappChangeSchema>;
