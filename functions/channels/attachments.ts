import type { ChannelAdapter, SendContext } from "./adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../core/envelope.ts";
import {
  handledMediaKind,
  hasAudioModel,
  type IntakeConfig,
  ingestMedia,
  limitKey,
  maxBytesFor,
  mediaKindOf,
} from "../media/ingest.ts";
import type { MediaPart } from "../media/parts.ts";
import type { MediaStore } from "../media/store.ts";

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
  /** An image, audio or document kept in the media store (a reference, never the bytes). */
  media?: MediaPart;
  /** A voice note or audio file that could not be transcribed, and why (told to the sender). */
  transcriptionError?: string;
}

/** Where media attachments go, and the key each one gets (store.ts mediaKey). */
export interface MediaIntake {
  store: MediaStore;
  config: IntakeConfig;
  keyFor(index: number): Promise<string>;
  /** Speech-to-text for audio (functions/agent/transcribe.ts), given by the session. */
  transcribe?(bytes: Uint8Array, part: MediaPart): Promise<{ text: string } | { error: string }>;
  /** A PDF's text (functions/agent/read-document.ts), given by the session. */
  readDocument?(bytes: Uint8Array, part: MediaPart): Promise<{ text: string } | { error: string }>;
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
  media?: MediaIntake,
): Promise<AttachmentText[]> {
  if (!attachments?.length) return [];
  const parts: AttachmentText[] = [];
  for (const [index, attachment] of attachments.entries()) {
    const label = [
      attachment.name ?? "file",
      attachment.mimeType,
      attachment.sizeBytes !== undefined ? `${attachment.sizeBytes} bytes` : undefined,
    ]
      .filter(Boolean)
      .join(", ");
    if (attachment.stored) {
      parts.push({ label, ...(await storedMedia(attachment, attachment.stored, index, media)) });
      continue;
    }
    const kind = media ? mediaKindOf(attachment, media.config) : undefined;
    if (media && kind && attachment.text === undefined) {
      parts.push({
        label,
        ...(await intakeMedia(attachment, kind, index, adapter, route, ctx, media)),
      });
      continue;
    }
    if (media && handledMediaKind(attachment) === "audio" && !hasAudioModel(media.config)) {
      const error = media.config.audio.enabled
        ? 'no speech-to-text model is configured (tools.media.models with capabilities ["audio"])'
        : "tools.media.audio.enabled is false";
      parts.push({ label, note: `not transcribed: ${error}`, transcriptionError: error });
      continue;
    }
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
      } else note = "skipped" in fetched ? fetched.skipped : "not a text file; contents not shown";
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

/** A media attachment downloaded through its channel (same host and token rules) into the store. */
async function intakeMedia(
  attachment: InboundAttachment,
  kind: NonNullable<ReturnType<typeof mediaKindOf>>,
  index: number,
  adapter: ChannelAdapter | undefined,
  route: ReplyRoute,
  ctx: SendContext,
  media: MediaIntake,
): Promise<{ media?: MediaPart; note?: string; transcriptionError?: string }> {
  const result = await downloadMedia(attachment, kind, index, adapter, route, ctx, media);
  if (kind === "document") return readText(result, media);
  if (kind !== "audio") return result;
  if (!("media" in result)) return { ...result, transcriptionError: result.note };
  const heard = media.transcribe
    ? await media.transcribe(result.bytes, result.media)
    : { error: "no speech-to-text in this context" };
  if ("text" in heard) return { media: { ...result.media, transcript: heard.text } };
  return {
    media: result.media,
    note: `not transcribed: ${heard.error}`,
    transcriptionError: heard.error,
  };
}

/**
 * A stored PDF with its text when the reader finds some. Without text it is still kept (a model
 * that reads PDFs natively gets the file), and the note says why there is no text.
 */
async function readText(
  result: { media: MediaPart; bytes: Uint8Array } | { note: string },
  media: MediaIntake,
): Promise<{ media?: MediaPart; note?: string }> {
  if (!("media" in result)) return result;
  const read = media.readDocument
    ? await media.readDocument(result.bytes, result.media)
    : { error: "no document reader in this context" };
  if ("text" in read) return { media: { ...result.media, text: read.text } };
  return { media: result.media, note: `text not read: ${read.error}` };
}

async function downloadMedia(
  attachment: InboundAttachment,
  kind: NonNullable<ReturnType<typeof mediaKindOf>>,
  index: number,
  adapter: ChannelAdapter | undefined,
  route: ReplyRoute,
  ctx: SendContext,
  media: MediaIntake,
): Promise<{ media: MediaPart; bytes: Uint8Array } | { note: string }> {
  if (!attachment.url) return { note: "not downloaded (over the size limit or no link)" };
  const maxBytes = maxBytesFor(media.config, kind);
  if (attachment.sizeBytes !== undefined && attachment.sizeBytes > maxBytes)
    return { note: `not downloaded: over ${limitKey(kind)} (${maxBytes} bytes)` };
  if (!adapter?.fetchAttachment) return { note: "this channel cannot download attachments" };
  const fetched = await adapter.fetchAttachment(attachment, route, ctx).catch((error: unknown) => ({
    skipped: `download failed: ${error instanceof Error ? error.message : String(error)}`,
  }));
  if ("skipped" in fetched) return { note: fetched.skipped };
  if (!("bytes" in fetched)) return { note: "download gave no file" };
  try {
    const result = await ingestMedia({
      attachment,
      kind,
      bytes: fetched.bytes,
      config: media.config,
      store: media.store,
      key: await media.keyFor(index),
    });
    return "part" in result ? { media: result.part, bytes: fetched.bytes } : result;
  } catch (error) {
    return {
      note: `could not be kept: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/** An image the HTTP API stored before accepting the event: kept only under this event's own key. */
async function storedMedia(
  attachment: InboundAttachment,
  stored: NonNullable<InboundAttachment["stored"]>,
  index: number,
  media: MediaIntake | undefined,
): Promise<{ media: MediaPart } | { note: string }> {
  if (!media) return { note: "no media store is bound; not shown" };
  if (stored.ref !== (await media.keyFor(index)))
    return { note: "names media that is not this message's; not shown" };
  return {
    media: {
      kind: "image",
      ref: stored.ref,
      mimeType: stored.mimeType,
      sizeBytes: stored.sizeBytes,
      ...(attachment.name ? { name: attachment.name } : {}),
    },
  };
}
