import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import type { InboundAttachment } from "../../functions/core/envelope.ts";
import { fromBase64 } from "../../functions/media/parts.ts";
import { sniffMedia } from "../../functions/media/sniff.ts";
import { mediaKey, mediaStoreFor } from "../../functions/media/store.ts";
import { invalidRequest } from "./errors.ts";
import type { ChatCompletionRequest } from "./request-schema.ts";

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
  const { request } = args;
  const lastUser = request.messages.findLastIndex((message) => message.role === "user");
  const content = lastUser >= 0 ? request.messages[lastUser]!.content : undefined;
  if (!Array.isArray(content)) return [];
  const images = content.flatMap((part, index) =>
    part.type === "image_url"
      ? [
          {
            url: typeof part.image_url === "string" ? part.image_url : part.image_url.url,
            param: `messages.${lastUser}.content.${index}`,
          },
        ]
      : [],
  );
  return storeImageUrls({
    ...args,
    images,
    totalParam: `messages.${lastUser}.content`,
    limits: args.config.gateway.http.endpoints.chatCompletions.images,
    limitsKey: "gateway.http.endpoints.chatCompletions.images",
    partName: "image_url",
  });
}

/**
 * The images of one request (each a `data:` URL with the request field it came from), checked and
 * stored under this event's keys; the same rules for every endpoint, each with its own limits.
 */
export async function storeImageUrls(args: {
  images: Array<{ url: string; param: string }>;
  totalParam: string;
  limits: { allowedMimes: string[]; maxBytes: number };
  limitsKey: string;
  /** How the caller's API names an image part, for the messages. */
  partName: string;
  env: Record<string, unknown>;
  config: EdgeclawConfig;
  agentId: string;
  sessionKey: string;
  dedupKey: string;
}): Promise<InboundAttachment[]> {
  const { config, limits, partName } = args;
  const parts = args.images.map((image, index) => ({ ...image, index }));
  if (!parts.length) return [];
  const param = (index: number) => parts[index]!.param;
  if (parts.length > MAX_IMAGE_PARTS)
    throw invalidRequest(
      `At most ${MAX_IMAGE_PARTS} ${partName} parts in the latest user message`,
      param(MAX_IMAGE_PARTS),
      "too_many_images",
    );
  const maxBytes = Math.min(limits.maxBytes, config.tools.media.image.maxBytes);
  const decoded = parts.map(({ url, index }) => {
    const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    if (!match)
      throw invalidRequest(
        `${partName} must be a base64 data: URL (this gateway fetches no image from a URL)`,
        param(index),
        "image_url_not_allowed",
      );
    const mime = match[1]!.toLowerCase();
    if (!limits.allowedMimes.includes(mime))
      throw invalidRequest(
        `image type ${mime} is not accepted (${args.limitsKey}.allowedMimes)`,
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
      throw invalidRequest(`${partName} has invalid base64 data`, param(index), "invalid_image");
    if (bytes.byteLength > maxBytes)
      throw invalidRequest(
        `image is larger than ${maxBytes} bytes`,
        param(index),
        "image_too_large",
      );
    const sniffed = sniffMedia(bytes);
    if (sniffed?.mime !== mime)
      throw invalidRequest(
        `the ${partName} data is not a ${mime} image${sniffed ? ` (it is ${sniffed.mime})` : ""}`,
        param(index),
        "invalid_image",
      );
    return { bytes, mime };
  });
  const total = decoded.reduce((sum, image) => sum + image.bytes.byteLength, 0);
  if (total > MAX_TOTAL_IMAGE_BYTES)
    throw invalidRequest(
      `the images add up to more than ${MAX_TOTAL_IMAGE_BYTES} bytes`,
      args.totalParam,
      "image_too_large",
    );
  const store = mediaStoreFor(args.env);
  if (!store)
    throw invalidRequest(
      "this deployment has no media store (the MEDIA R2 binding), so it takes no images",
      param(0),
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
