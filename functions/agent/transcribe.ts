import type { MediaConfig, MediaModelConfig } from "../config/media-schema.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import type { SecretEnv } from "../config/secret-ref.ts";
import { withTimeout } from "../core/with-timeout.ts";
import { toBase64 } from "../media/parts.ts";
import { resolveModel } from "./model-resolve.ts";
import { budgetStopNotice, type MeterTicket, type ModelCallMeter } from "./metering.ts";
import { transcriptionOutcome, transcriptionStart } from "./transcribe-meter.ts";
import { ModelError } from "./types.ts";

/**
 * Speech-to-text for a voice note or an audio file (OpenClaw's `tools.media.audio`): the
 * `tools.media.models` entries whose `capabilities` include "audio", the one `audio.preferredModel`
 * names first, each tried in turn until one answers:
 * - `provider: "workers-ai"`: the Worker's `AI` binding, `@cf/openai/whisper-large-v3-turbo` unless
 *   `model` names another, with the audio as base64;
 * - any other provider: OpenAI's `POST {baseUrl}/audio/transcriptions` (multipart `file`, `model`,
 *   `language`), with the base URL and key of `models.providers.<provider>` or the built-in
 *   `openai` (`gpt-4o-mini-transcribe` unless `model` names another).
 * Each call is bounded by `timeoutSeconds`; the answer is cut at `maxChars`.
 */

export const DEFAULT_WHISPER = "@cf/openai/whisper-large-v3-turbo";
export const DEFAULT_OPENAI_STT = "gpt-4o-mini-transcribe";

/** The one line a sender reads when their voice note could not be transcribed. */
export function voiceNoteNotice(reason: string): string {
  return `🎤 I couldn't transcribe your voice message: ${reason.slice(0, 200)}`;
}

export type TranscribeResult = { text: string; model: string } | { error: string };

export async function transcribeAudio(args: {
  bytes: Uint8Array;
  mimeType: string;
  name?: string;
  config: EdgeclawConfig;
  env: SecretEnv;
  /**
   * The session's meter (kind "transcription"): each attempt is admitted against the budgets
   * before the audio leaves and settled with what it used (transcribe-meter.ts).
   */
  meter?: ModelCallMeter;
}): Promise<TranscribeResult> {
  const media = args.config.tools.media;
  const entries = audioEntries(media);
  if (!entries.length)
    return {
      error:
        'no speech-to-text model is configured (tools.media.models with capabilities ["audio"])',
    };
  const errors: string[] = [];
  for (const entry of entries) {
    const timeoutMs = (entry.timeoutSeconds ?? media.audio.timeoutSeconds) * 1000;
    const language = entry.language ?? media.audio.language;
    const maxChars = entry.maxChars ?? media.audio.maxChars;
    const model = `${entry.provider}/${entry.model ?? (entry.provider === "workers-ai" ? DEFAULT_WHISPER : DEFAULT_OPENAI_STT)}`;
    const start = transcriptionStart(args.config, model, args.bytes.byteLength, maxChars);
    let ticket: MeterTicket | undefined;
    try {
      ticket = await args.meter?.admit(start);
    } catch (error) {
      // A budget with no room (or no price under a USD cap) stops transcription altogether.
      const stop = budgetStopNotice(error);
      if (stop) return { error: error instanceof Error ? error.message : stop };
      errors.push(`${entry.provider}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    try {
      const heard =
        entry.provider === "workers-ai"
          ? { text: await viaWorkersAi(args, entry.model ?? DEFAULT_WHISPER, language, timeoutMs) }
          : await viaOpenAi(args, entry, language, timeoutMs);
      const trimmed = heard.text.trim();
      if (ticket)
        await args.meter!.settle(ticket, start, transcriptionOutcome(start, trimmed, heard.usage));
      return {
        text: trimmed.length > maxChars ? `${trimmed.slice(0, maxChars)}…` : trimmed,
        model,
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (ticket)
        await args.meter!.settle(ticket, start, {
          ok: false,
          error: new ModelError("server", message),
        });
      errors.push(`${entry.provider}: ${message}`);
    }
  }
  return { error: errors.join("; ").slice(0, 300) };
}

/** The audio entries, `audio.preferredModel` first (matched as provider/model, model id or provider:<id>). */
export function audioEntries(media: MediaConfig): MediaModelConfig[] {
  if (!media.audio.enabled) return [];
  const entries = media.models.filter(
    (entry) => entry.type === "provider" && entry.capabilities.includes("audio"),
  );
  const preferred = media.audio.preferredModel;
  if (!preferred) return entries;
  const matches = (entry: MediaModelConfig) =>
    preferred === `${entry.provider}/${entry.model}` ||
    preferred === entry.model ||
    preferred === `provider:${entry.provider}`;
  return [...entries.filter(matches), ...entries.filter((entry) => !matches(entry))];
}

async function viaWorkersAi(
  args: { bytes: Uint8Array; env: SecretEnv },
  model: string,
  language: string | undefined,
  timeoutMs: number,
): Promise<string> {
  const ai = (args.env as Record<string, unknown>).AI as
    | { run?: (model: string, inputs: unknown) => Promise<unknown> }
    | undefined;
  if (typeof ai?.run !== "function")
    throw new Error('no Workers AI binding (wrangler.toml [ai] binding = "AI")');
  const inputs = { audio: toBase64(args.bytes), ...(language ? { language } : {}) };
  const result = await withTimeout(ai.run(model, inputs), timeoutMs);
  const text = (result as { text?: unknown } | null)?.text;
  if (typeof text !== "string") throw new Error(`${model} answered without a transcript`);
  return text;
}

async function viaOpenAi(
  args: {
    bytes: Uint8Array;
    mimeType: string;
    name?: string;
    config: EdgeclawConfig;
    env: SecretEnv;
  },
  entry: MediaModelConfig,
  language: string | undefined,
  timeoutMs: number,
): Promise<{ text: string; usage?: { input_tokens?: unknown; output_tokens?: unknown } }> {
  const modelId = entry.model ?? DEFAULT_OPENAI_STT;
  const resolved = resolveModel(args.config, args.env, `${entry.provider}/${modelId}`);
  const form = new FormData();
  const extension = args.mimeType.split("/")[1]?.replace("mpeg", "mp3") ?? "bin";
  form.append(
    "file",
    new Blob([args.bytes as Uint8Array<ArrayBuffer>], { type: args.mimeType }),
    `audio.${extension}`,
  );
  form.append("model", modelId);
  if (language) form.append("language", language);
  form.append("response_format", "json");
  const response = await fetch(`${resolved.baseUrl.replace(/\/+$/, "")}/audio/transcriptions`, {
    method: "POST",
    headers: {
      ...resolved.headers,
      ...(resolved.apiKey ? { authorization: `Bearer ${resolved.apiKey}` } : {}),
    },
    body: form,
    redirect: "manual",
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await response.json().catch(() => undefined)) as
    | {
        text?: unknown;
        error?: { message?: unknown };
        usage?: { input_tokens?: unknown; output_tokens?: unknown };
      }
    | undefined;
  if (!response.ok)
    throw new Error(
      `HTTP ${response.status}${typeof body?.error?.message === "string" ? `: ${body.error.message.slice(0, 200)}` : ""}`,
    );
  if (typeof body?.text !== "string") throw new Error("the answer had no text");
  return { text: body.text, ...(body.usage ? { usage: body.usage } : {}) };
}
