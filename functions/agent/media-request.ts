import { toBase64, type InlineImage, type MediaPart } from "../media/parts.ts";
import type { Message } from "./types.ts";
import { sanitizeLabel } from "./untrusted-text.ts";

/**
 * The images of a request, for the one model that is about to be called. A model whose catalog
 * entry declares image input (`models.providers.<id>.models[].input: ["text", "image"]`; the
 * built-in anthropic and openai providers by default) gets the pixels of the images in the last
 * IMAGE_TURNS_KEPT user turns that have any, loaded from the media store for this call only; older
 * turns say the image was already seen (OpenClaw's replay rule, which bounds tokens and bytes).
 * A model without image input gets the image's description when one was made
 * (tools.media.image), else a line that says it cannot see it. Nothing here is written back: the
 * transcript keeps references only.
 *
 * A tool's images (a browser screenshot: a tool message's `media`) count among those turns. Tool
 * results stay text (OpenAI's tool messages take no images), so their pixels follow
 * the batch of tool results as one user message naming the calls; a model without image input,
 * or an older turn, has the result's text alone, which names the stored reference.
 */

export const IMAGE_TURNS_KEPT = 3;
export const IMAGE_REMOVED_NOTE = "[image data removed - already processed by model]";
export const IMAGE_STRIPPED_NOTICE =
  "The model refused the image(s) in this conversation, so I answered without them.";

export type LoadMedia = (ref: string) => Promise<Uint8Array | undefined>;

export interface PreparedMedia {
  messages: Message[];
  /** Images attached as pixels in this request. */
  imageCount: number;
  /** Bytes of those images held while the request is built and sent (decoded size). */
  heldBytes: number;
}

export async function prepareImages(
  messages: Message[],
  options: {
    acceptsImages: boolean;
    modelRef: string;
    load?: LoadMedia;
    /** The provider refused this request's images once: name them, send no pixels. */
    refused?: boolean;
  },
): Promise<PreparedMedia> {
  if (!messages.some(hasImages)) return { messages, imageCount: 0, heldBytes: 0 };
  const withPixels = new Set<number>();
  if (options.acceptsImages && options.load) {
    for (let i = messages.length - 1; i >= 0 && withPixels.size < IMAGE_TURNS_KEPT; i--)
      if (hasImages(messages[i]!)) withPixels.add(i);
  }
  let imageCount = 0;
  let heldBytes = 0;
  const out: Message[] = [];
  /** Pixels of the tool results just pushed, sent after the last of them. */
  let toolImages: { callIds: string[]; images: InlineImage[] } = { callIds: [], images: [] };
  const flushToolImages = () => {
    if (!toolImages.images.length) return;
    out.push({
      role: "user",
      content: `[${toolImages.images.length === 1 ? "The image" : "The images"} from tool call ${toolImages.callIds.join(", ")} above]`,
      images: toolImages.images,
    });
    toolImages = { callIds: [], images: [] };
  };
  for (const [index, message] of messages.entries()) {
    if (message.role !== "tool") flushToolImages();
    if (message.role === "tool") {
      out.push(message);
      if (!withPixels.has(index) || options.refused) continue;
      for (const image of message.media!.filter((part) => part.kind === "image")) {
        const bytes = await options.load!(image.ref).catch(() => undefined);
        if (!bytes) continue;
        toolImages.images.push({ mimeType: image.mimeType, data: toBase64(bytes) });
        if (!toolImages.callIds.includes(message.toolCallId))
          toolImages.callIds.push(message.toolCallId);
        imageCount++;
        heldBytes += bytes.byteLength;
      }
      continue;
    }
    if (message.role !== "user" || !hasImages(message)) {
      out.push(message);
      continue;
    }
    const images = message.media!.filter((part) => part.kind === "image");
    const notes: string[] = [];
    const inline: NonNullable<Extract<Message, { role: "user" }>["images"]> = [];
    for (const image of images) {
      if (!withPixels.has(index)) {
        notes.push(
          options.acceptsImages ? IMAGE_REMOVED_NOTE : textOnlyNote(image, options.modelRef),
        );
        continue;
      }
      if (options.refused) {
        notes.push(`[image ${nameOf(image)} not shown: the model refused it]`);
        continue;
      }
      const bytes = await options.load!(image.ref).catch(() => undefined);
      if (!bytes) {
        notes.push(`[image ${nameOf(image)} is no longer stored]`);
        continue;
      }
      inline.push({ mimeType: image.mimeType, data: toBase64(bytes) });
      imageCount++;
      heldBytes += bytes.byteLength;
    }
    out.push({
      role: "user",
      content: notes.length ? `${message.content}\n${notes.join("\n")}` : message.content,
      ...(message.media ? { media: message.media } : {}),
      ...(inline.length ? { images: inline } : {}),
    });
  }
  flushToolImages();
  return { messages: out, imageCount, heldBytes };
}

export function requestHasImages(messages: Message[]): boolean {
  return messages.some((message) => message.role === "user" && !!message.images?.length);
}

/**
 * A provider's 400 that is about an image (too large, unsupported type, cannot be processed, the
 * model has no vision): the words each API uses in its error message.
 */
export function isImageRefusal(message: string): boolean {
  return /\bimage|vision|image_url|media_type|multimodal/i.test(message);
}

function hasImages(message: Message): boolean {
  return (
    (message.role === "user" || message.role === "tool") &&
    !!message.media?.some((part) => part.kind === "image")
  );
}

function textOnlyNote(image: MediaPart, modelRef: string): string {
  if (image.description)
    return `[Description of the image ${nameOf(image)} (machine-generated): ${sanitizeLabel(image.description, 4000)}]`;
  return `[Image ${nameOf(image)} not shown: ${modelRef} takes no image input (models.providers.*.models[].input), and no image model (tools.media.image) described it]`;
}

function nameOf(image: MediaPart): string {
  return `"${sanitizeLabel(image.name ?? "image", 120)}"`;
}
