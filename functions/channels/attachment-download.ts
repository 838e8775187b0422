import { readBodyPrefix } from "../http/read-prefix.ts";
import { MAX_ATTACHMENT_CHARS } from "./attachments.ts";
import type { InboundAttachment } from "../core/envelope.ts";
import type { FetchedAttachment } from "./adapter.ts";
import { handledMediaKind } from "../media/ingest.ts";

/**
 * The two ends every channel's `fetchAttachment` shares; what lies between (whose token goes to
 * which host, which redirects are followed) stays with the channel, since that is where they differ.
 */

/** Bytes kept of a download: the model reads at most MAX_ATTACHMENT_CHARS characters (≤ 4 bytes each in UTF-8). */
export const MAX_ATTACHMENT_PREFIX_BYTES = MAX_ATTACHMENT_CHARS * 4;

/** The attachment's link as a URL (`noun` names it in the reason), or why there is nothing to download. */
export function attachmentUrl(
  attachment: InboundAttachment,
  noun = "download link",
): URL | { skipped: string } {
  if (!attachment.url) return { skipped: `no ${noun}` };
  try {
    return new URL(attachment.url);
  } catch {
    return { skipped: `malformed ${noun}` };
  }
}

/** The refusal bound of a download: its size in bytes, and what to say when a file is larger. */
export interface DownloadLimit {
  maxBytes: number;
  tooLarge: string;
}

/** The usual bound: the channel's `mediaMaxMb` (a fraction allowed), in whole bytes. */
export function mediaMaxMbLimit(mediaMaxMb: number): DownloadLimit {
  return {
    maxBytes: Math.floor(mediaMaxMb * 1024 * 1024),
    tooLarge: `larger than mediaMaxMb (${mediaMaxMb} MB)`,
  };
}

/**
 * A successful download's body for the model. Streamed: larger than `limit` (declared, or found
 * while reading) is refused. Media the gateway reads (ingest.ts handledMediaKind: by declared type or name) is read
 * whole, for the media store (functions/media/ingest.ts checks what it really is); anything else
 * as text, of which only the first MAX_ATTACHMENT_PREFIX_BYTES are read at all.
 */
export async function attachmentText(
  response: Response,
  limit: DownloadLimit,
  attachment?: Pick<InboundAttachment, "mimeType" | "name">,
): Promise<FetchedAttachment> {
  if (attachment && handledMediaKind(attachment)) {
    const bytes = await readWhole(response, limit.maxBytes);
    return bytes ? { bytes } : { skipped: limit.tooLarge };
  }
  const body = await readBodyPrefix(response, {
    maxBytes: limit.maxBytes,
    keepBytes: MAX_ATTACHMENT_PREFIX_BYTES,
  });
  if (!body.ok) return { skipped: limit.tooLarge };
  // `stream: true` leaves a multi-byte character cut at the end out instead of mangling it.
  const text = new TextDecoder().decode(body.bytes, { stream: body.truncated });
  return body.truncated ? { text, truncated: true } : { text };
}

/**
 * The whole body, or undefined past `maxBytes` (declared, or found while reading: a sender may
 * omit or understate its length). Grows with what arrives instead of reserving `maxBytes` up front.
 */
async function readWhole(response: Response, maxBytes: number): Promise<Uint8Array | undefined> {
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (!response.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
