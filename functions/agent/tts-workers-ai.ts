import type { TtsProviderConfig } from "../config/media-schema.ts";
import { withTimeout } from "../core/with-timeout.ts";

/**
 * Text to speech on Workers AI (`tts.providers["workers-ai"]`, the Worker's `AI` binding):
 * Deepgram Aura, `env.AI.run("@cf/deepgram/aura-1", { text, speaker, encoding, container },
 * { returnRawResponse: true })`, answered with the audio's bytes. A voice note asks for Opus in Ogg
 * (what Telegram's sendVoice plays); an audio file for `responseFormat` (mp3 unless set; wav is
 * 16-bit PCM in a WAV container). `speakerVoice` is one of Aura's speakers (angus unless set).
 */

export const WORKERS_AI_TTS_ID = "workers-ai";
export const DEFAULT_WORKERS_AI_TTS_MODEL = "@cf/deepgram/aura-1";
export const DEFAULT_WORKERS_AI_SPEAKER = "angus";

type Format = NonNullable<TtsProviderConfig["responseFormat"]>;

/** Aura's encoding and container for each format edgeclaw asks for. */
const AURA_OUTPUT: Record<Format, { encoding: string; container?: string }> = {
  mp3: { encoding: "mp3" },
  opus: { encoding: "opus", container: "ogg" },
  flac: { encoding: "flac" },
  wav: { encoding: "linear16", container: "wav" },
};

export async function speakWithWorkersAi(args: {
  env: Record<string, unknown>;
  provider: TtsProviderConfig;
  text: string;
  format: Format;
  timeoutMs: number;
}): Promise<Uint8Array> {
  const ai = args.env.AI as
    | { run?: (model: string, inputs: unknown, options?: unknown) => Promise<unknown> }
    | undefined;
  if (typeof ai?.run !== "function")
    throw new Error('no Workers AI binding (wrangler.toml [ai] binding = "AI")');
  const output = AURA_OUTPUT[args.format];
  const inputs = {
    text: args.text,
    speaker: args.provider.speakerVoice ?? DEFAULT_WORKERS_AI_SPEAKER,
    encoding: output.encoding,
    ...(output.container ? { container: output.container } : {}),
  };
  const model = args.provider.model ?? DEFAULT_WORKERS_AI_TTS_MODEL;
  const answer = await withTimeout(
    ai.run(model, inputs, { returnRawResponse: true }),
    args.timeoutMs,
  );
  if (!(answer instanceof Response)) throw new Error(`${model} answered without audio`);
  if (!answer.ok) {
    const detail = (await answer.text().catch(() => "")).slice(0, 200);
    throw new Error(`HTTP ${answer.status}${detail ? `: ${detail}` : ""}`);
  }
  return new Uint8Array(await withTimeout(answer.arrayBuffer(), args.timeoutMs));
}
