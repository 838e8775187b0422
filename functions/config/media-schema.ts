import { z } from "zod";

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
