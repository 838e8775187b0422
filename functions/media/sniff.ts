/**
 * What a file is, from its first bytes: a sender's (or platform's) declared type is a claim, the
 * magic numbers are the fact. Media whose bytes are none of these formats is refused as
 * unrecognised, and bytes that contradict the declared kind (a "photo" that is a PDF) as a
 * mismatch, before anything is stored or sent to a model.
 */

export type MediaKind = "image" | "audio" | "document";

/** The formats edgeclaw takes as media, by kind; images are the four every vision API accepts. */
const SIGNATURES: Array<{ mime: string; kind: MediaKind; test: (b: Uint8Array) => boolean }> = [
  {
    mime: "image/png",
    kind: "image",
    test: (b) => starts(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  },
  { mime: "image/jpeg", kind: "image", test: (b) => starts(b, [0xff, 0xd8, 0xff]) },
  { mime: "image/gif", kind: "image", test: (b) => ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a") },
  { mime: "image/webp", kind: "image", test: (b) => ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP") },
  { mime: "audio/ogg", kind: "audio", test: (b) => ascii(b, 0, "OggS") },
  { mime: "audio/wav", kind: "audio", test: (b) => ascii(b, 0, "RIFF") && ascii(b, 8, "WAVE") },
  { mime: "audio/flac", kind: "audio", test: (b) => ascii(b, 0, "fLaC") },
  { mime: "audio/webm", kind: "audio", test: (b) => starts(b, [0x1a, 0x45, 0xdf, 0xa3]) },
  { mime: "audio/amr", kind: "audio", test: (b) => ascii(b, 0, "#!AMR") },
  // ID3-tagged MP3, or a bare MPEG audio frame (11 sync bits; layer bits not 00).
  {
    mime: "audio/mpeg",
    kind: "audio",
    test: (b) =>
      ascii(b, 0, "ID3") ||
      (b[0] === 0xff && ((b[1] ?? 0) & 0xe0) === 0xe0 && ((b[1] ?? 0) & 0x06) !== 0),
  },
  // ISO base media (m4a, mp4 voice memos): `ftyp` at offset 4.
  { mime: "audio/mp4", kind: "audio", test: (b) => ascii(b, 4, "ftyp") },
  { mime: "application/pdf", kind: "document", test: (b) => ascii(b, 0, "%PDF-") },
];

export interface Sniffed {
  mime: string;
  kind: MediaKind;
}

export function sniffMedia(bytes: Uint8Array): Sniffed | undefined {
  for (const signature of SIGNATURES)
    if (signature.test(bytes)) return { mime: signature.mime, kind: signature.kind };
  return undefined;
}

/**
 * The kind a declared type (or, failing that, a file name) names, or undefined for anything
 * else (text files, archives, video). Video is not handed to models here.
 */
export function declaredMediaKind(
  mimeType: string | undefined,
  name?: string,
): MediaKind | undefined {
  const mime = (mimeType ?? "").toLowerCase();
  if (mime.startsWith("image/")) return mime === "image/svg+xml" ? undefined : "image";
  if (mime.startsWith("audio/")) return "audio";
  if (mime === "application/pdf") return "document";
  if (mime && mime !== "application/octet-stream") return undefined;
  const lower = (name ?? "").toLowerCase();
  if (/\.(png|jpe?g|gif|webp)(\s|$|\))/.test(lower)) return "image";
  if (/\.(ogg|oga|opus|mp3|m4a|wav|flac|amr)(\s|$|\))/.test(lower)) return "audio";
  if (/\.pdf(\s|$|\))/.test(lower)) return "document";
  return undefined;
}

function starts(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((byte, index) => bytes[index] === byte);
}

function ascii(bytes: Uint8Array, offset: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}
