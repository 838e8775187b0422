import type { TtsProviderConfig } from "../config/media-schema.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import { resolveSecret, type SecretEnv } from "../config/secret-ref.ts";
import { sniffMedia } from "../media/sniff.ts";
import { budgetStopNotice, type MeterTicket, type ModelCallMeter } from "./metering.ts";
import { mediaCallStart, transcriptionOutcome } from "./transcribe-meter.ts";
import {
  DEFAULT_WORKERS_AI_TTS_MODEL,
  speakWithWorkersAi,
  WORKERS_AI_TTS_ID,
} from "./tts-workers-ai.ts";
import { ModelError } from "./types.ts";

/**
 * Text to speech for a reply (OpenClaw's `tts`). The provider is `tts.provider` (else the first
 * `tts.providers` entry): `workers-ai` speaks through the Worker's `AI` binding (Deepgram Aura,
 * tts-workers-ai.ts); any other id through OpenAI's speech API, `POST <baseUrl>/audio/speech` with
 * `{ model, input, voice, response_format }` — `openai` defaults to https://api.openai.com/v1 and
 * OPENAI_API_KEY, any other id needs its `baseUrl` (or a `models.providers.<id>` block to take it
 * from). A voice note asks for Opus in Ogg (what Telegram's sendVoice plays); an audio file for
 * `responseFormat` (mp3).
 *
 * Metered as kind "tts" through the session's meter (admitted against the budgets before the text
 * leaves). The speech API reports no usage, so the text's length / 4 is charged as input tokens at
 * the catalogue's price for `<provider>/<model>`; the audio it returns is not counted.
 */

export const DEFAULT_TTS_MODEL = "gpt-4o-mini-tts";
export const DEFAULT_TTS_VOICE = "alloy";

export type SpeechResult =
  | { bytes: Uint8Array; mimeType: string; model: string }
  | { error: string };

export async function synthesizeSpeech(args: {
  config: EdgeclawConfig;
  env: SecretEnv;
  text: string;
  voiceNote: boolean;
  meter?: ModelCallMeter;
}): Promise<SpeechResult> {
  const tts = args.config.tts;
  const id = tts.provider ?? Object.keys(tts.providers)[0];
  if (!id) return { error: "no tts.providers entry is configured" };
  const provider = tts.providers[id] ?? {};
  const format = args.voiceNote ? "opus" : (provider.responseFormat ?? "mp3");
  const onWorkersAi = id === WORKERS_AI_TTS_ID;
  const speakOpenAi = onWorkersAi ? undefined : openAiSpeaker(args, id, provider);
  if (typeof speakOpenAi === "string") return { error: speakOpenAi };
  const model = provider.model ?? (onWorkersAi ? DEFAULT_WORKERS_AI_TTS_MODEL : DEFAULT_TTS_MODEL);
  const start = mediaCallStart(args.config, `${id}/${model}`, byteLength(args.text), 0);
  let ticket: MeterTicket | undefined;
  try {
    ticket = await args.meter?.admit(start);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { error: budgetStopNotice(error) ? message : `budget check: ${message}` };
  }
  try {
    const bytes = speakOpenAi
      ? await speakOpenAi(model, format)
      : await speakWithWorkersAi({
          env: args.env as Record<string, unknown>,
          provider,
          text: args.text,
          format,
          timeoutMs: tts.timeoutMs,
        });
    const sniffed = sniffMedia(bytes);
    if (sniffed?.kind !== "audio") throw new Error("the answer is not audio");
    if (ticket)
      await args.meter!.settle(
        ticket,
        start,
        transcriptionOutcome(start, "", {
          input_tokens: Math.ceil(args.text.length / 4),
          output_tokens: 0,
        }),
      );
    return { bytes, mimeType: sniffed.mime, model: `${id}/${model}` };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (ticket)
      await args.meter!.settle(ticket, start, {
        ok: false,
        error: new ModelError("server", message),
      });
    return { error: `${id}: ${message}`.slice(0, 300) };
  }
}

/**
 * OpenAI's speech API for provider `id`: a function that speaks, or why it cannot (no base URL).
 * `openai` defaults to https://api.openai.com/v1 and OPENAI_API_KEY; any other id takes its
 * `baseUrl` and key from `tts.providers.<id>`, else from `models.providers.<id>`.
 */
function openAiSpeaker(
  args: { config: EdgeclawConfig; env: SecretEnv; text: string },
  id: string,
  provider: TtsProviderConfig,
): ((model: string, format: string) => Promise<Uint8Array>) | string {
  const modelsEntry = args.config.models.providers[id];
  const baseUrl =
    provider.baseUrl ??
    modelsEntry?.baseUrl ??
    (id === "openai" ? "https://api.openai.com/v1" : undefined);
  if (!baseUrl) return `tts.providers.${id}.baseUrl is not set`;
  const apiKey =
    resolveSecret(provider.apiKey, args.env) ??
    resolveSecret(modelsEntry?.apiKey, args.env) ??
    (id === "openai" ? stringOf(args.env.OPENAI_API_KEY) : undefined);
  return async (model, format) => {
    const response = await fetch(`${baseUrl.replace(/\/+$/, "")}/audio/speech`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      },
      body: JSON.stringify({
        model,
        input: args.text,
        voice: provider.speakerVoice ?? DEFAULT_TTS_VOICE,
        response_format: format,
      }),
      redirect: "manual",
      signal: AbortSignal.timeout(args.config.tts.timeoutMs),
    });
    if (!response.ok) {
      const body = (await response.json().catch(() => undefined)) as
        | { error?: { message?: unknown } }
        | undefined;
      throw new Error(
        `HTTP ${response.status}${typeof body?.error?.message === "string" ? `: ${body.error.message.slice(0, 200)}` : ""}`,
      );
    }
    return new Uint8Array(await response.arrayBuffer());
  };
}

/**
 * What of a reply is spoken under `tts.auto`, or undefined for none: the whole reply ("always";
 * "inbound" when the message answered was a voice note), or under "tagged" the text of a
 * `[[tts:text]]…[[/tts:text]]` block, or the whole reply when it carries `[[tts]]`. `text` is the
 * reply with the tags removed (what is sent as text). A reply longer than `maxLength` is cut to it;
 * one over `maxTextLength` is not spoken.
 */
export function spokenPart(
  config: EdgeclawConfig,
  reply: string,
  answeredVoiceNote: boolean,
): { text: string; speak?: string } {
  const tts = config.tts;
  const block = /\[\[tts:text\]\]([\s\S]*?)\[\[\/tts:text\]\]/.exec(reply);
  const tagged = block !== null || /\[\[tts\]\]/.test(reply);
  const text = reply
    .replace(/\[\[tts:text\]\][\s\S]*?\[\[\/tts:text\]\]/g, "")
    .replace(/\[\[tts\]\]/g, "")
    .trim();
  const wanted =
    tts.auto === "always" ||
    (tts.auto === "inbound" && answeredVoiceNote) ||
    (tts.auto === "tagged" && tagged);
  if (!wanted) return { text: tts.auto === "tagged" ? text : reply };
  const source = (block?.[1] ?? text).trim();
  if (!source || (tts.maxTextLength !== undefined && source.length > tts.maxTextLength))
    return { text };
  return { text, speak: source.length > tts.maxLength ? source.slice(0, tts.maxLength) : source };
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value ? value : undefined;
}
