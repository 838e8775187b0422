import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import type { InboundAttachment } from "../../functions/core/envelope.ts";
import { fromBase64 } from "../../functions/media/parts.ts";
import { sniffMedia } from "../../functions/media/sniff.ts";
import { mediaKey, mediaStoreFor } from "../../functions/media/store.ts";
import { invalidRequest } from "./errors.ts";
import type { ChatCompletionRequest, ContentPart } from "./request-schema.ts";

/**
 * The `image_url` parts of the latest user message (OpenClaw's limits: at most 8, each within
 * `gateway.http.endpoints.chatCompletions.images.maxBytes` and `tools.media.image.maxBytes`, at
 * most 20 MB decoded in all; types from `images.allowedMimes`). Each must be a `data:` URL whose
 * bytes are the image type it declares; an https URL is refused (the gateway fetches no image a
 * caller points at). They are stored in the media store under this event's own keys before the
 * event is accepted, and the event carries the references. Any failure is a 400 before the session
 * sees anything (a stored image of a refused request is never referenced).
 */

export const MAX_IMAGE_PARTS = 8;
export const MAX_TOTAL_IMAGE_BYTES = 20 * 1024 * 1024;

export async function storeRequestImages(args: {
  request: ChatCompletionRequest;
  env: Record<string, unknown>;
  config: EdgeclawConfig;
  agentId: string;
  sessionKey: string;
  dedupKey: string;
}): Promise<InboundAttachment[]> {
  const { request, config } = args;
  const lastUser = request.messages.findLastIndex((message) => message.role === "user");
  const content = lastUser >= 0 ? request.messages[lastUser]!.content : undefined;
  if (!Array.isArray(content)) return [];
  const parts = content
    .map((part, index) => ({ part, index }))
    .filter(
      (entry): entry is { part: Extract<ContentPart, { type: "image_url" }>; index: number } =>
        entry.part.type === "image_url",
    );
  if (!parts.length) return [];
  const param = (index: number) => `messages.${lastUser}.content.${index}`;
  if (parts.length > MAX_IMAGE_PARTS)
    throw invalidRequest(
      `At most ${MAX_IMAGE_PARTS} image_url parts in the latest user message`,
      param(parts[MAX_IMAGE_PARTS]!.index),
      "too_many_images",
    );
  const limits = config.gateway.http.endpoints.chatCompletions.images;
  const maxBytes = Math.min(limits.maxBytes, config.tools.media.image.maxBytes);
  const decoded = parts.map(({ part, index }) => {
    const url = typeof part.image_url === "string" ? part.image_url : part.image_url.url;
    const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    if (!match)
      throw invalidRequest(
        "image_url must be a base64 data: URL (this gateway fetches no image from a URL)",
        param(index),
        "image_url_not_allowed",
      );
    const mime = match[1]!.toLowerCase();
    if (!limits.allowedMimes.includes(mime))
      throw invalidRequest(
        `image type ${mime} is not accepted (gateway.http.endpoints.chatCompletions.images.allowedMimes)`,
        param(index),
        "invalid_image",
      );
    if ((match[2]!.length * 3) / 4 > maxBytes + 3)
      throw invalidRequest(
        `image is larger than ${maxBytes} bytes`,
        param(index),
        "image_too_large",
      );
    const bytes = fromBase64(match[2]!);
    if (!bytes)
      throw invalidRequest("image_url has invalid base64 data", param(index), "invalid_image");
    if (bytes.byteLength > maxBytes)
      throw invalidRequest(
        `image is larger than ${maxBytes} bytes`,
        param(index),
        "image_too_large",
      );
    const sniffed = sniffMedia(bytes);
    if (sniffed?.mime !== mime)
      throw invalidRequest(
        `the image_url data is not a ${mime} image${sniffed ? ` (it is ${sniffed.mime})` : ""}`,
        param(index),
        "invalid_image",
      );
    return { bytes, mime };
  });
  const total = decoded.reduce((sum, image) => sum + image.bytes.byteLength, 0);
  if (total > MAX_TOTAL_IMAGE_BYTES)
    throw invalidRequest(
      `the images add up to more than ${MAX_TOTAL_IMAGE_BYTES} bytes`,
      `messages.${lastUser}.content`,
      "image_too_large",
    );
  const store = mediaStoreFor(args.env);
  if (!store)
    throw invalidRequest(
      "this deployment has no media store (the MEDIA R2 binding), so it takes no images",
      param(parts[0]!.index),
      "unsupported_content",
    );
  const attachments: InboundAttachment[] = [];
  for (const [i, image] of decoded.entries()) {
    const ref = await mediaKey(args.agentId, args.sessionKey, args.dedupKey, i);
    await store.put(ref, image.bytes, image.mime);
    attachments.push({
      name: `image-${i + 1}.${image.mime.slice("image/".length)}`,
      mimeType: image.mime,
      sizeBytes: image.bytes.byteLength,
      stored: { ref, mimeType: image.mime, sizeBytes: image.bytes.byteLength },
    });
  }
  return attachments;
}
