import { clip, type InboundEnvelopeInput } from "../../core/envelope.ts";
import { graphUrl, type WhatsAppCloudAccount } from "./config.ts";
import type { WhatsAppMessage } from "./payloads.ts";

/**
 * What the model reads for one user message: its text, or OpenClaw's placeholder for media
 * (`<media:image>`, …) after the caption, with the media as an attachment the pipeline downloads
 * after access control (media.ts). Locations and shared contacts become short text; an interactive
 * reply (a reply button or list row) or a template's quick-reply button is what the user answered:
 * the title they saw and its id. A reaction and a `system` notice (the user changed their number)
 * are system events. Undefined for a type this channel does not take (`unsupported`, `order`, …).
 */
export interface MessageContent {
  text: string;
  system?: boolean;
  attachments?: InboundEnvelopeInput["attachments"];
}

/** The type's own object, every field optional and a string where one is read. */
type Part = Record<string, string | undefined> & { [list: string]: unknown };

const MEDIA = ["image", "audio", "video", "document", "sticker"];

export function describeMessage(
  message: WhatsAppMessage,
  account: WhatsAppCloudAccount,
): MessageContent | undefined {
  const type = message.type;
  const part = (message[type] ?? {}) as Part;
  const said = (...values: unknown[]) => clip(values.filter(Boolean).map(String).join(", "), 300);
  if (MEDIA.includes(type) && part.id) {
    const placeholder = `<media:${type}>`;
    return {
      text: part.caption ? `${part.caption}\n${placeholder}` : placeholder,
      attachments: [
        {
          name: part.filename ?? `${type} ${part.id}`,
          mimeType: part.mime_type,
          // The Graph API's media node: media.ts asks it for the short-lived download URL.
          url: graphUrl(account, encodeURIComponent(part.id)),
        },
      ],
    };
  }
  const picked = (part.button_reply ?? part.list_reply) as Part | undefined;
  const text =
    type === "text"
      ? part.body
      : type === "location"
        ? `[location: ${said(part.name, part.address)} (${part.latitude}, ${part.longitude})]`
        : type === "contacts" && Array.isArray(message.contacts)
          ? (message.contacts as Array<{ name?: Part; phones?: Part[] }>)
              .map(
                (c) =>
                  `[contact: ${said(c.name?.formatted_name, ...(c.phones ?? []).map((p) => p.phone))}]`,
              )
              .join("\n")
          : type === "interactive" && picked
            ? `${picked.title} [${part.type}: ${said(picked.id)}]`
            : type === "button"
              ? `${part.text ?? part.payload} [button: ${said(part.payload)}]`
              : undefined;
  if (text) return { text: String(text) };
  if (type === "reaction")
    return {
      system: true,
      text: `WhatsApp: reacted ${part.emoji || "(removed)"} to ${said(part.message_id)}`,
    };
  if (type === "system") return { system: true, text: `WhatsApp: ${clip(String(part.body), 500)}` };
  return undefined;
}
