import { resolveModel } from "../../../functions/agent/model-resolve.ts";
import type { ModelSelection } from "../../../functions/agent/model-resolve.ts";
import type { CallModelFn } from "./deps.ts";
import type { ModelCallKind } from "../../../functions/agent/metering.ts";
import type { Message } from "../../../functions/agent/types.ts";
import type { MediaConfig } from "../../../functions/config/media-schema.ts";
import type { MediaPart } from "../../../functions/media/parts.ts";
import type { SessionState } from "../state.ts";
import type { RunRow } from "../storage.ts";

/**
 * For a run whose model takes no images (`models.providers.<id>.models[].input` without "image"):
 * each image of the run's user turn is described once by an image model (the `tools.media.models`
 * entries with `capabilities: ["image"]`, `tools.media.image.preferredModel` first), metered as
 * `image_description`, and the description is kept on the media part, so the text-only model reads
 * it (functions/agent/media-request.ts) and a resumed run does not ask again. A failed description
 * leaves the image named and not described; the run goes on.
 */

export const DESCRIBE_PROMPT =
  "Describe this image for someone who cannot see it: what it shows, any text in it (quoted), and anything notable. Plain prose, at most a few sentences.";

export async function describeImagesIfNeeded(
  s: SessionState,
  run: RunRow,
  deps: {
    selection: ModelSelection;
    callModelWith: (kind: ModelCallKind, selection: ModelSelection) => CallModelFn;
  },
  signal: AbortSignal,
): Promise<void> {
  const media = s.config.tools.media;
  const row = s.store.transcript
    .ofRun(run.runId)
    .find(
      (entry) =>
        entry.message.role === "user" &&
        entry.message.media?.some((part) => part.kind === "image" && !part.description),
    );
  if (!row || !media.image.enabled) return;
  const primary = deps.selection.primary;
  if (!primary || takesImages(s, primary)) return;
  const models = imageModels(media);
  if (!models.length) return;
  const call = deps.callModelWith("image_description", {
    primary: models[0]!,
    fallbacks: models.slice(1),
    origin: "config",
  });
  const message = row.message as Extract<Message, { role: "user" }>;
  const described: MediaPart[] = [];
  for (const part of message.media ?? []) {
    if (part.kind !== "image" || part.description) {
      described.push(part);
      continue;
    }
    const text = await call({
      system: "",
      messages: [{ role: "user", content: media.image.prompt ?? DESCRIBE_PROMPT, media: [part] }],
      tools: [],
      signal,
    })
      .then((result) => result.text.trim())
      .catch((error: unknown) => {
        if (signal.aborted) throw error;
        return "";
      });
    described.push(text ? { ...part, description: text.slice(0, media.image.maxChars) } : part);
  }
  s.store.transcript.replaceMessage(row.seq, { ...message, media: described });
}

function takesImages(s: SessionState, ref: string): boolean {
  try {
    return resolveModel(s.config, s.env, ref).acceptsImages;
  } catch {
    return false;
  }
}

/** `provider/model` refs of the image entries, `image.preferredModel` first. */
export function imageModels(media: MediaConfig): string[] {
  const refs = media.models
    .filter((entry) => entry.type === "provider" && entry.capabilities.includes("image"))
    .filter((entry) => entry.model)
    .map((entry) => `${entry.provider}/${entry.model}`);
  const preferred = media.image.preferredModel;
  if (!preferred) return refs;
  const first = refs.filter((ref) => ref === preferred || ref.endsWith(`/${preferred}`));
  return [...first, ...refs.filter((ref) => !first.includes(ref))];
}
