import * as z from "zod";
import { secretInputSchema } from "./secret-ref.ts";

/**
 * `tools.media` (OpenClaw's gateway__config-tools.md): what happens to the media a sender attaches.
 * The bytes go to the media store (R2 in production, a folder of the data dir in dev;
 * functions/media/store.ts); the transcript keeps a reference, its type and size.
 *
 * `models` is OpenClaw's one list of media models, each naming what it handles
 * (`capabilities: ["audio"]`, `["image"]`); `image` and `audio` switch a capability on or off and
 * pick one entry first (`preferredModel`). Entries edgeclaw can run: `provider: "workers-ai"`
 * (the Worker's `AI` binding), and an OpenAI-compatible provider (`openai`, or any
 * `models.providers.<id>` with a `baseUrl`) for audio (`/audio/transcriptions`) and image
 * descriptions (a chat completion). `type: "cli"` entries need a local machine and are refused.
 */

const mediaModelSchema = z
  .object({
    type: z.enum(["provider", "cli"]).default("provider"),
    provider: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    capabilities: z.array(z.enum(["image", "audio", "video"])).min(1),
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    prompt: z.string().optional(),
    maxChars: z.number().int().positive().optional(),
    maxBytes: z.number().int().positive().optional(),
    timeoutSeconds: z.number().positive().optional(),
    language: z.string().optional(),
  })
  .loose()
  .refine((entry) => entry.type !== "cli", {
    message:
      'type "cli" media models run a local program, which a Worker cannot; use provider "workers-ai" or an OpenAI-compatible provider',
  })
  .refine((entry) => entry.type === "cli" || entry.provider !== undefined, {
    message: "a provider entry needs `provider`",
  });
export type MediaModelConfig = z.infer<typeof mediaModelSchema>;

const capabilitySchema = (maxBytes: number, maxChars: number) =>
  z
    .object({
      enabled: z.boolean().default(true),
      /** `provider/model`, a model id or `provider:<id>`: that entry of `models` is tried first. */
      preferredModel: z.string().min(1).optional(),
      /** Largest attachment of this kind that is stored and handed on, in bytes. */
      maxBytes: z.number().int().positive().default(maxBytes),
      /** Characters of a transcript or description the model sees. */
      maxChars: z.number().int().positive().default(maxChars),
      timeoutSeconds: z.number().positive().default(60),
      language: z.string().optional(),
      prompt: z.string().optional(),
    })
    .loose()
    .prefault({});

export const mediaSchema = z
  .object({
    models: z.array(mediaModelSchema).default([]),
    /** Images: Anthropic takes at most 5 MB per image; a larger one is described in words only. */
    image: capabilitySchema(5 * 1024 * 1024, 2_000),
    /** Voice notes and audio files: transcribed before the run (20 MB, OpenClaw's default). */
    audio: capabilitySchema(20 * 1024 * 1024, 20_000),
  })
  .loose()
  .prefault({});
export type MediaConfig = z.infer<typeof mediaSchema>;

/**
 * `tts` (OpenClaw's tools/tts; its own top-level block, kept here beside the media it makes so the
 * config's module graph stays small): replies read out as audio. Off by default. Providers:
 * `workers-ai` (the Worker's `AI` binding: Deepgram Aura, `@cf/deepgram/aura-1`, speaker angus
 * unless `speakerVoice` names another), and the OpenAI speech API (`POST <baseUrl>/audio/speech`) —
 * `providers.openai`, or any provider id with a `baseUrl` that speaks it (a local server, an
 * OpenAI-compatible proxy).
 * - `auto`: "off" (default); "always" (every final reply); "inbound" (only a reply to a voice
 *   note); "tagged" (only a reply carrying `[[tts]]` or a `[[tts:text]]…[[/tts:text]]` block).
 * - `provider`: which `providers.<id>` speaks (default: the first configured one).
 * - `maxLength` (1500): a longer reply is cut to this many characters before it is spoken.
 * - `maxTextLength`: a hard bound; a reply over it is not spoken at all.
 * - `timeoutMs` (30000): one synthesis call.
 */
const ttsProviderSchema = z
  .object({
    /** The provider's key (else `models.providers.<id>.apiKey`; `openai`: OPENAI_API_KEY). */
    apiKey: secretInputSchema.optional(),
    /** Where its OpenAI speech API is (`<baseUrl>/audio/speech`; `openai`: https://api.openai.com/v1). */
    baseUrl: z.string().url().optional(),
    /** The speech model (gpt-4o-mini-tts unless set; workers-ai: @cf/deepgram/aura-1). */
    model: z.string().min(1).optional(),
    /** The voice (alloy unless set; workers-ai: one of Aura's speakers, angus unless set). */
    speakerVoice: z.string().min(1).optional(),
    /** The audio file format when no voice note is wanted (mp3 unless set); voice notes are opus. */
    responseFormat: z.enum(["mp3", "opus", "flac", "wav"]).optional(),
  })
  .loose();

export const ttsSchema = z
  .object({
    /** off; always (every final reply); inbound (a reply to a voice note); tagged (a reply with [[tts]] or [[tts:text]]…[[/tts:text]]). */
    auto: z.enum(["off", "always", "inbound", "tagged"]).default("off"),
    /** Which `tts.providers` entry speaks (default: the first). */
    provider: z.string().min(1).optional(),
    providers: z.record(z.string(), ttsProviderSchema).default({}),
    /** A longer reply is cut to this many characters before it is spoken. */
    maxLength: z.number().int().min(100).max(4096).default(1500),
    /** A reply longer than this is not spoken at all. */
    maxTextLength: z.number().int().positive().optional(),
    /** The bound of one synthesis call. */
    timeoutMs: z.number().int().positive().default(30_000),
  })
  .loose()
  .prefault({});

export type TtsConfig = z.infer<typeof ttsSchema>;
export type TtsProviderConfig = z.infer<typeof ttsProviderSchema>;
