import { describe, expect, it } from "vitest";
import { spokenPart, synthesizeSpeech } from "../../functions/agent/tts.ts";
import { BudgetExceededError, type ModelCallMeter } from "../../functions/agent/metering.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { recorded, suiteConfig, testEnv } from "./model-helpers.ts";

/**
 * Voice replies (`tts`): what of a reply is spoken under each `tts.auto` mode, and the speech call
 * against the fake model server's OpenAI /audio/speech (real audio back), metered as kind "tts".
 */

function withTts(tts: Record<string, unknown>) {
  const raw = JSON.parse(String(testEnv.EDGECLAW_CONFIG)) as Record<string, unknown>;
  raw.tts = { provider: "fakeopenai", providers: { fakeopenai: { model: "tts-test" } }, ...tts };
  return configFromEnv({ ...testEnv, EDGECLAW_CONFIG: JSON.stringify(raw) });
}

describe("spokenPart", () => {
  it("speaks by tts.auto: off, always, inbound (only after a voice note), tagged", () => {
    expect(spokenPart(withTts({ auto: "off" }), "Hi.", true)).toEqual({ text: "Hi." });
    expect(spokenPart(withTts({ auto: "always" }), "Hi.", false)).toEqual({
      text: "Hi.",
      speak: "Hi.",
    });
    expect(spokenPart(withTts({ auto: "inbound" }), "Hi.", false)).toEqual({ text: "Hi." });
    expect(spokenPart(withTts({ auto: "inbound" }), "Hi.", true).speak).toBe("Hi.");
    const tagged = withTts({ auto: "tagged" });
    expect(spokenPart(tagged, "Plain.", false)).toEqual({ text: "Plain." });
    expect(spokenPart(tagged, "Read this. [[tts]]", false)).toEqual({
      text: "Read this.",
      speak: "Read this.",
    });
    expect(spokenPart(tagged, "Shown.[[tts:text]]Only heard.[[/tts:text]]", false)).toEqual({
      text: "Shown.",
      speak: "Only heard.",
    });
  });

  it("cuts a long reply to maxLength and does not speak one over maxTextLength", () => {
    const long = "a".repeat(300);
    expect(spokenPart(withTts({ auto: "always", maxLength: 100 }), long, false).speak).toHaveLength(
      100,
    );
    expect(
      spokenPart(withTts({ auto: "always", maxTextLength: 200 }), long, false).speak,
    ).toBeUndefined();
  });
});

describe("synthesizeSpeech", () => {
  it("asks /audio/speech for Opus for a voice note and an MP3 otherwise; metered as one call each", async () => {
    const settled: unknown[] = [];
    const meter: ModelCallMeter = {
      admit: async () => ({ id: crypto.randomUUID(), startedAt: Date.now() }),
      settle: async (_t, start, outcome) => void settled.push({ ref: start.model.ref, outcome }),
    };
    const config = withTts({ auto: "always" });
    const voice = await synthesizeSpeech({
      config,
      env: testEnv,
      text: "Hello there",
      voiceNote: true,
      meter,
    });
    expect(voice).toMatchObject({ mimeType: "audio/ogg", model: "fakeopenai/tts-test" });
    const file = await synthesizeSpeech({
      config,
      env: testEnv,
      text: "Hello there",
      voiceNote: false,
      meter,
    });
    expect(file).toMatchObject({ mimeType: "audio/mpeg" });
    const calls = await recorded("tts:tts-test");
    expect(calls.at(-1)!.headers.authorization).toBe("Bearer test-openai-key");
    expect(
      calls.slice(-2).map((c) => (c.body as { response_format: string }).response_format),
    ).toEqual(["opus", "mp3"]);
    expect(settled).toEqual([
      { ref: "fakeopenai/tts-test", outcome: expect.objectContaining({ ok: true }) },
      { ref: "fakeopenai/tts-test", outcome: expect.objectContaining({ ok: true }) },
    ]);
  });

  it("a budget with no room stops the speech call before any request", async () => {
    const meter: ModelCallMeter = {
      admit: async () => {
        throw new BudgetExceededError({
          scope: "global",
          period: "day",
          unit: "usd",
          limit: 1,
          spent: 1,
          resetsAt: Date.now() + 1000,
        });
      },
      settle: async () => undefined,
    };
    const before = (await recorded("tts:tts-test")).length;
    const result = await synthesizeSpeech({
      config: suiteConfig,
      env: testEnv,
      text: "Hi",
      voiceNote: false,
      meter,
    });
    expect(result).toEqual({ error: expect.stringContaining("budget reached") });
    expect((await recorded("tts:tts-test")).length).toBe(before);
  });

  it("speaks through the Workers AI binding (Deepgram Aura): Opus in Ogg for a voice note, MP3 otherwise, metered under workers-ai/<model>", async () => {
    const settled: string[] = [];
    const meter: ModelCallMeter = {
      admit: async () => ({ id: crypto.randomUUID(), startedAt: Date.now() }),
      settle: async (_t, start) => void settled.push(start.model.ref),
    };
    const config = withTts({
      auto: "always",
      provider: "workers-ai",
      providers: { "workers-ai": { speakerVoice: "luna" } },
    });
    const text = `Workers AI speaks ${crypto.randomUUID()}`;
    const voice = await synthesizeSpeech({ config, env: testEnv, text, voiceNote: true, meter });
    expect(voice).toMatchObject({
      mimeType: "audio/ogg",
      model: "workers-ai/@cf/deepgram/aura-1",
    });
    const file = await synthesizeSpeech({ config, env: testEnv, text, voiceNote: false, meter });
    expect(file).toMatchObject({ mimeType: "audio/mpeg" });
    const calls = (await recorded("workers-ai:@cf/deepgram/aura-1")).filter(
      (call) => call.body.text === text,
    );
    expect(calls.map((call) => call.body)).toEqual([
      { text, speaker: "luna", encoding: "opus", container: "ogg" },
      { text, speaker: "luna", encoding: "mp3" },
    ]);
    expect(settled).toEqual(["workers-ai/@cf/deepgram/aura-1", "workers-ai/@cf/deepgram/aura-1"]);

    const refused = await synthesizeSpeech({
      config: withTts({
        auto: "always",
        provider: "workers-ai",
        providers: { "workers-ai": { speakerVoice: "nobody" } },
      }),
      env: testEnv,
      text,
      voiceNote: false,
    });
    expect(refused).toEqual({
      error: expect.stringMatching(/^workers-ai: HTTP 400: .*speaker nobody is not one of Aura's/),
    });
    const unbound = await synthesizeSpeech({
      config,
      env: { ...testEnv, AI: undefined },
      text,
      voiceNote: false,
    });
    expect(unbound).toEqual({ error: expect.stringContaining("no Workers AI binding") });
  });
});
