import { describe, expect, it } from "vitest";
import { transcribeAudio } from "../../functions/agent/transcribe.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { fromBase64 } from "../../functions/media/parts.ts";
import { fakeModelUrl, recorded, suiteConfig, testEnv } from "./model-helpers.ts";

/**
 * Speech-to-text against the fake model server's two wire formats (test/fakes/speech.ts): OpenAI's
 * multipart /audio/transcriptions and Workers AI whisper through the fake AI binding. The fixtures
 * are real audio made with espeak-ng and ffmpeg (test/fixtures/media/voice.ogg, voice.mp3).
 */

async function fixture(name: string): Promise<Uint8Array> {
  const res = await fetch(`${fakeModelUrl()}/_control/fixture/${name}`);
  return fromBase64(((await res.json()) as { base64: string }).base64)!;
}

function withMedia(media: Record<string, unknown>) {
  const raw = JSON.parse(String(testEnv.EDGECLAW_CONFIG)) as Record<string, unknown>;
  raw.tools = { ...(raw.tools as Record<string, unknown>), media };
  return configFromEnv({ ...testEnv, EDGECLAW_CONFIG: JSON.stringify(raw) });
}

describe("transcribeAudio", () => {
  it("transcribes an OGG/Opus voice note through an OpenAI-compatible /audio/transcriptions", async () => {
    const before = (await recorded("stt:whisper-1")).length;
    const result = await transcribeAudio({
      bytes: await fixture("voice.ogg"),
      mimeType: "audio/ogg",
      config: suiteConfig,
      env: testEnv,
    });
    expect(result).toEqual({ text: "hello from the voice note", model: "fakeopenai/whisper-1" });
    const calls = await recorded("stt:whisper-1");
    expect(calls.length).toBe(before + 1);
    expect(calls.at(-1)!.headers.authorization).toBe("Bearer test-openai-key");
    expect(calls.at(-1)!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
  });

  it("transcribes an MP3 through Workers AI whisper (the AI binding)", async () => {
    const config = withMedia({ models: [{ provider: "workers-ai", capabilities: ["audio"] }] });
    const result = await transcribeAudio({
      bytes: await fixture("voice.mp3"),
      mimeType: "audio/mpeg",
      config,
      env: testEnv,
    });
    expect(result).toEqual({
      text: "hello from the voice note",
      model: "workers-ai/@cf/openai/whisper-large-v3-turbo",
    });
  });

  it("tries audio.preferredModel first", async () => {
    const config = withMedia({
      models: [
        { provider: "fakeopenai", model: "whisper-1", capabilities: ["audio"] },
        { provider: "workers-ai", capabilities: ["audio"] },
      ],
      audio: { preferredModel: "provider:workers-ai" },
    });
    const result = await transcribeAudio({
      bytes: await fixture("voice.ogg"),
      mimeType: "audio/ogg",
      config,
      env: testEnv,
    });
    expect(result).toMatchObject({ model: "workers-ai/@cf/openai/whisper-large-v3-turbo" });
  });

  it("says why when every model refuses the audio, and when none is configured", async () => {
    const corrupt = new TextEncoder().encode("OggS and then nothing a decoder could open");
    const failed = await transcribeAudio({
      bytes: corrupt,
      mimeType: "audio/ogg",
      config: suiteConfig,
      env: testEnv,
    });
    expect("error" in failed ? failed.error : JSON.stringify(failed)).toMatch(
      /fakeopenai: HTTP 400: Invalid file format.*workers-ai: .*could not decode/,
    );
    const none = await transcribeAudio({
      bytes: corrupt,
      mimeType: "audio/ogg",
      config: withMedia({ models: [] }),
      env: testEnv,
    });
    expect(none).toEqual({
      error:
        'no speech-to-text model is configured (tools.media.models with capabilities ["audio"])',
    });
  });
});
