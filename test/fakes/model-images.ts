/**
 * The fake model server's check of image parts, as each provider documents them, so a request that
 * a real API would refuse is refused here too (400 in that API's error envelope):
 *
 * - Anthropic Messages: a user block `{type: "image", source: {type: "base64", media_type, data}}`,
 *   media_type one of image/jpeg, image/png, image/gif, image/webp, the decoded bytes of that type
 *   and at most 5 MB; images only in user turns.
 * - OpenAI Chat Completions: a user content part `{type: "image_url", image_url: {url, detail?}}`,
 *   url a `data:<image type>;base64,<data>` URL (or https), decoded bytes of the declared type.
 *
 * - Anthropic Messages, PDFs: a user block `{type: "document", source: {type: "base64",
 *   media_type: "application/pdf", data}, title?}`, the decoded bytes a PDF (`%PDF-`) of at most
 *   32 MB; documents only in user turns.
 *
 * `imagesOf` / `documentsOf` tell a test what arrived: each one's type and size, in request order.
 */

// Web APIs only (atob, Uint8Array): the server (Node) and the workerd tests both load this file.
const latin1 = (b: Uint8Array, from: number, to: number) =>
  String.fromCharCode(...b.subarray(from, to));
const IMAGE_TYPES: Record<string, (bytes: Uint8Array) => boolean> = {
  "image/png": (b) => latin1(b, 0, 8) === "\x89PNG\r\n\x1a\n",
  "image/jpeg": (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  "image/gif": (b) => ["GIF87a", "GIF89a"].includes(latin1(b, 0, 6)),
  "image/webp": (b) => latin1(b, 0, 4) === "RIFF" && latin1(b, 8, 12) === "WEBP",
};

function decode(data: string): Uint8Array {
  return Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
}
const ANTHROPIC_MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface SeenImage {
  mimeType: string;
  bytes: number;
}

/** Why a real API would refuse this body's images, or undefined when they are well formed. */
export function imageProblem(
  api: "anthropic" | "openai",
  body: Record<string, unknown>,
): string | undefined {
  const messages = Array.isArray(body.messages)
    ? (body.messages as Array<Record<string, unknown>>)
    : [];
  for (const [m, message] of messages.entries()) {
    if (!Array.isArray(message.content)) continue;
    for (const [c, part] of (message.content as Array<Record<string, unknown>>).entries()) {
      const where = `messages.${m}.content.${c}`;
      if (api === "anthropic" && part.type === "image") {
        if (message.role !== "user") return `${where}: image blocks are only allowed in user turns`;
        const problem = anthropicImageProblem(part.source);
        if (problem) return `${where}.image.source${problem}`;
      }
      if (api === "anthropic" && part.type === "document") {
        if (message.role !== "user")
          return `${where}: document blocks are only allowed in user turns`;
        const problem = anthropicDocumentProblem(part.source);
        if (problem) return `${where}.document.source${problem}`;
      }
      if (api === "openai" && part.type === "image_url") {
        if (message.role !== "user")
          return `${where}: image_url parts are only allowed in user messages`;
        const problem = openAiImageProblem(part.image_url);
        if (problem) return `${where}.image_url: ${problem}`;
      }
    }
  }
  return undefined;
}

export function imagesOf(api: "anthropic" | "openai", body: Record<string, unknown>): SeenImage[] {
  const seen: SeenImage[] = [];
  const messages = Array.isArray(body.messages)
    ? (body.messages as Array<Record<string, unknown>>)
    : [];
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as Array<Record<string, unknown>>) {
      if (api === "anthropic" && part.type === "image") {
        const source = part.source as { media_type: string; data: string };
        seen.push({ mimeType: source.media_type, bytes: decode(source.data).length });
      }
      if (api === "openai" && part.type === "image_url") {
        const url = (part.image_url as { url: string }).url;
        const match = /^data:([^;]+);base64,(.*)$/s.exec(url);
        if (match) seen.push({ mimeType: match[1]!, bytes: decode(match[2]!).length });
      }
    }
  }
  return seen;
}

export interface SeenDocument {
  title?: string;
  bytes: number;
  /** The decoded file as latin1, for a test to look into. */
  latin1: string;
}

export function documentsOf(body: Record<string, unknown>): SeenDocument[] {
  const seen: SeenDocument[] = [];
  const messages = Array.isArray(body.messages)
    ? (body.messages as Array<Record<string, unknown>>)
    : [];
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as Array<Record<string, unknown>>) {
      if (part.type !== "document") continue;
      const bytes = decode((part.source as { data: string }).data);
      seen.push({
        ...(typeof part.title === "string" ? { title: part.title } : {}),
        bytes: bytes.length,
        latin1: latin1(bytes, 0, bytes.length),
      });
    }
  }
  return seen;
}

const ANTHROPIC_MAX_PDF_BYTES = 32 * 1024 * 1024;

function anthropicDocumentProblem(source: unknown): string | undefined {
  if (!isRecord(source)) return ": Field required";
  if (source.type !== "base64")
    return ".type: Input should be 'base64', 'text', 'content' or 'url'";
  if (source.media_type !== "application/pdf")
    return ".base64.media_type: Input should be 'application/pdf'";
  if (typeof source.data !== "string" || !BASE64.test(source.data))
    return ".base64.data: Invalid base64 data";
  const bytes = decode(source.data);
  if (bytes.length > ANTHROPIC_MAX_PDF_BYTES) return ": PDF exceeds 32 MB maximum";
  if (latin1(bytes, 0, 5) !== "%PDF-") return ": The PDF specified was not valid";
  return undefined;
}

function anthropicImageProblem(source: unknown): string | undefined {
  if (!isRecord(source)) return ": Field required";
  if (source.type === "url")
    return typeof source.url === "string" ? undefined : ".url: Field required";
  if (source.type !== "base64") return ".type: Input should be 'base64' or 'url'";
  const mediaType = String(source.media_type ?? "");
  if (!IMAGE_TYPES[mediaType])
    return `.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
  if (typeof source.data !== "string" || !BASE64.test(source.data))
    return ".base64.data: Invalid base64 data";
  const bytes = decode(source.data);
  if (bytes.length > ANTHROPIC_MAX_IMAGE_BYTES) return ".base64: image exceeds 5 MB maximum";
  if (!IMAGE_TYPES[mediaType]!(bytes))
    return `.base64.data: The image was specified using the ${mediaType} media type, but it does not appear to be a valid ${mediaType} image`;
  return undefined;
}

/**
 * Inline bytes of a declared image type (Gemini's inlineData): a known type, base64, bytes of it.
 * Gemini takes other media inline too; the suite only sends images.
 */
export function imageBytesProblem(mimeType: string, data: string): string | undefined {
  if (!IMAGE_TYPES[mimeType]) return `Unsupported MIME type: ${mimeType}`;
  if (!BASE64.test(data)) return "Invalid value at 'data' (TYPE_BYTES), Base64 decoding failed";
  if (!IMAGE_TYPES[mimeType]!(decode(data))) return "Provided image is not valid.";
  return undefined;
}

/** Inline PDF bytes (Gemini inlineData, Responses input_file): base64 of a `%PDF-` file. */
export function pdfBytesProblem(data: string): string | undefined {
  if (!BASE64.test(data)) return "Invalid value at 'data' (TYPE_BYTES), Base64 decoding failed";
  const bytes = decode(data);
  if (latin1(bytes, 0, 5) !== "%PDF-") return "The document has no pages.";
  return undefined;
}

/** A Responses `input_image` part's `image_url`: an https URL or a base64 data URL of an image. */
export function dataUrlImageProblem(url: unknown): string | undefined {
  if (typeof url !== "string") return "Missing required parameter: 'image_url'.";
  return openAiImageProblem({ url });
}

function openAiImageProblem(imageUrl: unknown): string | undefined {
  if (!isRecord(imageUrl) || typeof imageUrl.url !== "string")
    return "expected an object with `url`";
  if (imageUrl.detail !== undefined && !["auto", "low", "high"].includes(String(imageUrl.detail)))
    return "detail must be auto, low or high";
  if (imageUrl.url.startsWith("https://")) return undefined;
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(imageUrl.url);
  if (!match) return "Invalid image URL: expected an https URL or a base64 data URL";
  const [, mime, data] = match;
  if (!IMAGE_TYPES[mime!]) return `Invalid image format ${mime}: use png, jpeg, gif or webp`;
  if (!BASE64.test(data!)) return "Invalid base64 image data";
  if (!IMAGE_TYPES[mime!]!(decode(data!))) return "Invalid image data";
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
