import type { ChannelAdapter, SendContext } from "./adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../core/envelope.ts";

/** Characters of one attachment's text the model sees; the rest is cut with a marker. */
export const MAX_ATTACHMENT_CHARS = 50_000;

const TEXT_TYPES =
  /^(text\/|application\/(json|xml|x-yaml|yaml|csv|x-ndjson|javascript|typescript|x-sh|sql|toml)\b)/i;

/** Files the model can read as text (code, notes, data); images and binaries are described only. */
export function isTextLike(attachment: InboundAttachment): boolean {
  if (attachment.mimeType && TEXT_TYPES.test(attachment.mimeType)) return true;
  return /\.(txt|md|markdown|csv|tsv|json|ya?ml|xml|toml|ini|log|py|ts|js|sh|sql|html?|css)$/i.test(
    attachment.name ?? "",
  );
}

/** One attachment as the model will see it: its label and either its (bounded) text or why there is none. */
export interface AttachmentText {
  /** Name, type and size, as the platform reported them (third-party text: fenced when shown). */
  label: string;
  /** The file's text, already cut at MAX_ATTACHMENT_CHARS. */
  body?: string;
  /** Why there is no body (too large, not text, download failed). */
  note?: string;
}

/**
 * The attachments of a message for the model: each one described, and text-like files downloaded
 * through the channel (bounded) and included. A failed download is said, not hidden. The prompt
 * fences each body as untrusted text (functions/agent/untrusted-text.ts) when the run is composed.
 */
export async function describeAttachments(
  attachments: InboundAttachment[] | undefined,
  adapter: ChannelAdapter | undefined,
  route: ReplyRoute,
  ctx: SendContext,
): Promise<AttachmentText[]> {
  if (!attachments?.length) return [];
  const parts: AttachmentText[] = [];
  for (const attachment of attachments) {
    const label = [
      attachment.name ?? "file",
      attachment.mimeType,
      attachment.sizeBytes !== undefined ? `${attachment.sizeBytes} bytes` : undefined,
    ]
      .filter(Boolean)
      .join(", ");
    let body = attachment.text;
    let note: string | undefined;
    let cutAtSource = false;
    if (
      body === undefined &&
      attachment.url &&
      isTextLike(attachment) &&
      adapter?.fetchAttachment
    ) {
      const fetched = await adapter
        .fetchAttachment(attachment, route, ctx)
        .catch((error: unknown) => ({
          skipped: `download failed: ${error instanceof Error ? error.message : String(error)}`,
        }));
      if ("text" in fetched) {
        body = fetched.text;
        cutAtSource = fetched.truncated === true;
      } else note = fetched.skipped;
    } else if (body === undefined) {
      note = !attachment.url
        ? "not downloaded (over the size limit or no link)"
        : isTextLike(attachment)
          ? "not downloaded"
          : "not a text file; contents not shown";
    }
    if (body !== undefined) {
      const rest = cutAtSource
        ? "the rest of the file was not downloaded"
        : `${body.length - MAX_ATTACHMENT_CHARS} more characters`;
      const cut =
        body.length > MAX_ATTACHMENT_CHARS || cutAtSource
          ? `${body.slice(0, MAX_ATTACHMENT_CHARS)}\n…[attachment truncated: ${rest}]`
          : body;
      parts.push({ label, body: cut });
    } else {
      parts.push({ label, note });
    }
  }
  return parts;
}
