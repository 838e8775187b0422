import type { MediaKind } from "./sniff.ts";

/**
 * One piece of media in a transcript: a reference to the bytes in the media store, never the
 * bytes. `mimeType` is what the bytes were found to be (sniff.ts), not what the sender claimed.
 */
export interface MediaPart {
  kind: MediaKind;
  /** The media store key (store.ts mediaKey). */
  ref: string;
  mimeType: string;
  sizeBytes: number;
  /** The file name as the platform reported it (third-party text: fenced wherever it is shown). */
  name?: string;
  /** Audio: what the speech-to-text model heard (machine-generated; fenced as the sender's words). */
  transcript?: string;
  /** Documents: the extracted text, bounded (fenced as the sender's attachment). */
  text?: string;
  /** Images: what the image model (tools.media.image) saw, for a model without image input. */
  description?: string;
}

/** An image loaded for one model request; built per call from a MediaPart, never stored. */
export interface InlineImage {
  mimeType: string;
  /** Base64 of the bytes. */
  data: string;
}

/** A PDF loaded for one model request that reads PDFs natively (document-request.ts); never stored. */
export interface InlineDocument {
  mimeType: "application/pdf";
  /** Base64 of the bytes. */
  data: string;
  /** The sender's file name (third-party text: the API shows it as the document's title). */
  name?: string;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step)
    binary += String.fromCharCode(...bytes.subarray(i, i + step));
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array | undefined {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return undefined;
  }
}
