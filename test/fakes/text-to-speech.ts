import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";

/**
 * OpenAI's text to speech on the fake model server: `POST /v1/audio/speech` with JSON
 * `{ model, input, voice, response_format }` and a Bearer key, answered with the audio's bytes —
 * real audio, the espeak-ng fixtures (test/fixtures/media/voice.ogg for "opus", voice.mp3 for
 * "mp3"), whatever the input says. Errors as OpenAI's: 401 without a key, 400 for a missing field,
 * an empty input or a format the fake does not carry.
 */

const FIXTURES = fileURLToPath(new URL("../fixtures/media/", import.meta.url));
const AUDIO: Record<string, { file: string; type: string }> = {
  opus: { file: "voice.ogg", type: "audio/ogg" },
  mp3: { file: "voice.mp3", type: "audio/mpeg" },
};

export function isSpeechRoute(method: string | undefined, path: string): boolean {
  return method === "POST" && /\/audio\/speech$/.test(path);
}

export async function handleOpenAiSpeech(
  req: IncomingMessage,
  res: ServerResponse,
  log: (body: Record<string, unknown>) => void,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
  } catch {
    return error(res, 400, "We could not parse the JSON body of your request.");
  }
  log(body);
  if (!String(req.headers.authorization ?? "").startsWith("Bearer "))
    return error(res, 401, "Missing bearer authentication in header");
  if (typeof body.model !== "string" || !body.model) return error(res, 400, "model is required");
  if (typeof body.voice !== "string" || !body.voice) return error(res, 400, "voice is required");
  if (typeof body.input !== "string" || !body.input.trim())
    return error(res, 400, "input is required");
  const format = typeof body.response_format === "string" ? body.response_format : "mp3";
  const audio = AUDIO[format];
  if (!audio) return error(res, 400, `response_format ${format} is not supported by this fake`);
  const bytes = readFileSync(`${FIXTURES}${audio.file}`);
  res.writeHead(200, { "content-type": audio.type, "content-length": String(bytes.byteLength) });
  res.end(bytes);
}

const AURA_SPEAKERS = new Set(
  "angus asteria arcas orion orpheus athena luna zeus perseus helios hera stella".split(" "),
);
/** Aura's encodings and the containers each takes (Workers AI's model page for @cf/deepgram/aura-1). */
const AURA_CONTAINERS: Record<string, string[]> = {
  linear16: ["none", "wav"],
  mulaw: ["none", "wav"],
  alaw: ["none", "wav"],
  opus: ["ogg"],
  mp3: ["none"],
  flac: ["none"],
  aac: ["none"],
};

export const WORKERS_AI_SPEECH_MODEL = "@cf/deepgram/aura-1";

/**
 * Workers AI's `@cf/deepgram/aura-1` on the fake server (`POST /ai/run/@cf/deepgram/aura-1`, what
 * the fake `AI` binding forwards `run` to): `{ text, speaker?, encoding?, container? }` checked as
 * the model's schema says, answered with real audio (Opus in Ogg, or MP3: the espeak-ng
 * fixtures); any other encoding is refused as one this fake does not carry.
 */
export function answerAuraSpeech(
  res: ServerResponse,
  inputs: Record<string, unknown>,
  log: (body: Record<string, unknown>) => void,
): void {
  log(inputs);
  const refuse = (message: string) => {
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ success: false, errors: [{ code: 5006, message }], result: null }));
  };
  if (typeof inputs.text !== "string" || !inputs.text.trim())
    return refuse("Type mismatch of '/text', 'string' not in 'undefined'");
  const speaker = inputs.speaker ?? "angus";
  if (!AURA_SPEAKERS.has(String(speaker)))
    return refuse(`speaker ${String(speaker)} is not one of Aura's`);
  const encoding = String(inputs.encoding ?? "mp3");
  const containers = AURA_CONTAINERS[encoding];
  if (!containers) return refuse(`encoding ${encoding} is not one of Aura's`);
  const container = String(inputs.container ?? (encoding === "opus" ? "ogg" : "none"));
  if (!containers.includes(container))
    return refuse(`container ${container} cannot hold encoding ${encoding}`);
  const audio = encoding === "opus" ? AUDIO.opus : encoding === "mp3" ? AUDIO.mp3 : undefined;
  if (!audio) return refuse(`encoding ${encoding} is not carried by this fake`);
  const bytes = readFileSync(`${FIXTURES}${audio.file}`);
  res.writeHead(200, { "content-type": audio.type, "content-length": String(bytes.byteLength) });
  res.end(bytes);
}

function error(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(
    JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code: null } }),
  );
}
