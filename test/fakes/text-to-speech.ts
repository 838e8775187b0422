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

function error(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(
    JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code: null } }),
  );
}
