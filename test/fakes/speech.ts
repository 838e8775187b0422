import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";

/**
 * Speech-to-text on the fake model server, in two providers' wire formats:
 *   POST /v1/audio/transcriptions   OpenAI: multipart/form-data with `file` and `model` (and
 *                                   optional `language`, `response_format`) → {text}
 *   Workers AI `@cf/openai/whisper*` through /ai/run (the fake AI binding): {audio: base64} → {text, word_count}
 * A transcript is what was said in a known fixture (test/fixtures/media/voice.ogg and voice.mp3,
 * spoken by espeak-ng: "hello from the voice note"), keyed by the bytes' SHA-256; other real audio
 * is "(unintelligible)"; bytes that are no audio container are refused as each API refuses them.
 *   GET /_control/fixture/<name>    a fixture's bytes as {base64}, for workerd tests (no file system there)
 */

const FIXTURES = fileURLToPath(new URL("../fixtures/media/", import.meta.url));
export const VOICE_NOTE_TEXT = "hello from the voice note";
const KNOWN = new Map<string, string>(
  ["voice.ogg", "voice.mp3"].map((name) => [
    sha256(readFileSync(`${FIXTURES}${name}`)),
    VOICE_NOTE_TEXT,
  ]),
);

export function isFixtureRoute(path: string): boolean {
  return path.startsWith("/_control/fixture/");
}

export function serveFixture(path: string, res: ServerResponse): void {
  const name = path.slice("/_control/fixture/".length);
  if (!/^[\w.-]+$/.test(name)) return json(res, 404, { error: "no such fixture" });
  try {
    json(res, 200, { base64: readFileSync(`${FIXTURES}${name}`).toString("base64") });
  } catch {
    json(res, 404, { error: "no such fixture" });
  }
}

export function isTranscriptionRoute(method: string | undefined, path: string): boolean {
  return method === "POST" && /\/audio\/transcriptions$/.test(path);
}

/** OpenAI's POST /v1/audio/transcriptions: parsed as the multipart body it is. */
export async function handleOpenAiTranscription(
  req: IncomingMessage,
  res: ServerResponse,
  log: (body: Record<string, unknown>) => void,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const contentType = String(req.headers["content-type"] ?? "");
  if (!contentType.startsWith("multipart/form-data"))
    return openAiError(res, 400, "Content-Type must be multipart/form-data");
  if (!String(req.headers.authorization ?? "").startsWith("Bearer "))
    return openAiError(res, 401, "Missing bearer authentication in header", "invalid_api_key");
  const form = await new Request("http://fake/", {
    method: "POST",
    headers: { "content-type": contentType },
    body: raw,
  }).formData();
  const file = form.get("file");
  const model = form.get("model");
  log({ model, language: form.get("language"), fileName: file instanceof File ? file.name : null });
  if (typeof model !== "string" || !model) return openAiError(res, 400, "model is required");
  if (!(file instanceof File)) return openAiError(res, 400, "file is required");
  const bytes = Buffer.from(await file.arrayBuffer());
  if (!isAudio(bytes))
    return openAiError(
      res,
      400,
      "Invalid file format. Supported formats: ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm']",
    );
  json(res, 200, { text: transcriptOf(bytes) });
}

/** Workers AI whisper (`audio` as base64, or an array of byte values as the older models take). */
export function whisperResult(
  inputs: Record<string, unknown>,
): { ok: true; result: unknown } | { ok: false; message: string } {
  const audio = inputs.audio;
  const bytes =
    typeof audio === "string"
      ? Buffer.from(audio, "base64")
      : Array.isArray(audio)
        ? Buffer.from(audio as number[])
        : undefined;
  if (!bytes?.length) return { ok: false, message: "audio is required" };
  if (!isAudio(bytes)) return { ok: false, message: "Invalid audio: could not decode the input" };
  const text = transcriptOf(bytes);
  return { ok: true, result: { text, word_count: text.split(/\s+/).length } };
}

function transcriptOf(bytes: Buffer): string {
  return KNOWN.get(sha256(bytes)) ?? "(unintelligible)";
}

/** A container a decoder opens: an Ogg stream must also name its codec in its first page. */
function isAudio(b: Buffer): boolean {
  const at = (offset: number, text: string) =>
    b.subarray(offset, offset + text.length).toString("latin1") === text;
  const head = b.subarray(0, 128).toString("latin1");
  if (at(0, "OggS")) return head.includes("OpusHead") || head.includes("vorbis");
  return at(0, "ID3") || (at(0, "RIFF") && at(8, "WAVE")) || at(4, "ftyp") || at(0, "fLaC");
}

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function openAiError(
  res: ServerResponse,
  status: number,
  message: string,
  code: string | null = null,
) {
  json(res, status, { error: { message, type: "invalid_request_error", param: null, code } });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
