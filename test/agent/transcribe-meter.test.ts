import { describe, expect, it } from "vitest";
import { transcribeAudio } from "../../functions/agent/transcribe.ts";
import {
  BudgetExceededError,
  type MeterOutcome,
  type MeterStart,
  type ModelCallMeter,
} from "../../functions/agent/metering.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { fromBase64 } from "../../functions/media/parts.ts";
import { fakeModelUrl, recorded, suiteConfig, testEnv } from "./model-helpers.ts";

/**
 * Transcription is metered and under the budgets (issue 22): each speech-to-text attempt goes
 * through the session's meter like a model call — admitted with its worst case before the audio
 * leaves, settled with what it used — and a budget with no room stops it before any request.
 */

async function fixture(name: string): Promise<Uint8Array> {
  const res = await fetch(`${fakeModelUrl()}/_control/fixture/${name}`);
  return fromBase64(((await res.json()) as { base64: string }).base64)!;
}

function recordingMeter(refuse?: BudgetExceededError) {
  const admitted: MeterStart[] = [];
  const settled: Array<{ start: MeterStart; outcome: MeterOutcome }> = [];
  const meter: ModelCallMeter = {
    async admit(start) {
      admitted.push(start);
      if (refuse) throw refuse;
      return { id: `t${admitted.length}`, startedAt: Date.now() };
    },
    async settle(_ticket, start, outcome) {
      settled.push({ start, outcome });
    },
  };
  return { meter, admitted, settled };
}

function pricedConfig() {
  const raw = JSON.parse(String(testEnv.EDGECLAW_CONFIG)) as {
    models: { providers: Record<string, { models?: Array<Record<string, unknown>> }> };
  };
  const provider = raw.models.providers.fakeopenai!;
  provider.models = [
    ...(provider.models ?? []),
    { id: "whisper-1", cost: { input: 2.5, output: 10 } },
  ];
  return configFromEnv({ ...testEnv, EDGECLAW_CONFIG: JSON.stringify(raw) });
}

describe("transcription metering", () => {
  it("admits each attempt with its worst case and settles it with what it used, priced from the catalogue", async () => {
    const { meter, admitted, settled } = recordingMeter();
    const bytes = await fixture("voice.ogg");
    const result = await transcribeAudio({
      bytes,
      mimeType: "audio/ogg",
      config: pricedConfig(),
      env: testEnv,
      meter,
    });
    expect(result).toMatchObject({ text: "hello from the voice note" });
    expect(admitted).toHaveLength(1);
    expect(admitted[0]!.model.ref).toBe("fakeopenai/whisper-1");
    // Worst case: the audio's bytes as input and tools.media.audio.maxChars (20,000) as output.
    expect(admitted[0]!.worstCase).toEqual({
      tokens: bytes.byteLength + 20_000,
      usd: (bytes.byteLength * 2.5 + 20_000 * 10) / 1_000_000,
    });
    expect(settled).toHaveLength(1);
    const outcome = settled[0]!.outcome;
    if (!outcome.ok) throw new Error("expected a settled success");
    // No usage in the fake's answer: the transcript's length / 4 as output tokens (25 chars → 7).
    expect(outcome.usage).toEqual({
      inputTokens: 0,
      outputTokens: 7,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(outcome.costUsd).toBeCloseTo((7 * 10) / 1_000_000, 12);
  });

  it("a budget with no room stops the transcription before any audio leaves", async () => {
    const refusal = new BudgetExceededError({
      scope: "global",
      period: "day",
      unit: "usd",
      limit: 1,
      spent: 1,
      resetsAt: Date.now() + 3600_000,
    });
    const { meter, settled } = recordingMeter(refusal);
    const before = (await recorded("stt:whisper-1")).length;
    const result = await transcribeAudio({
      bytes: await fixture("voice.ogg"),
      mimeType: "audio/ogg",
      config: suiteConfig,
      env: testEnv,
      meter,
    });
    expect(result).toEqual({
      error: expect.stringContaining("budget reached: gateway daily limit"),
    });
    expect((await recorded("stt:whisper-1")).length).toBe(before);
    expect(settled).toEqual([]);
  });

  it("a failed attempt is settled as an error, then the next model is tried and metered", async () => {
    const { meter, admitted, settled } = recordingMeter();
    const raw = JSON.parse(String(testEnv.EDGECLAW_CONFIG)) as Record<string, unknown>;
    raw.tools = {
      ...(raw.tools as Record<string, unknown>),
      media: {
        models: [
          { provider: "fakeopenai", model: "whisper-1", capabilities: ["audio"] },
          { provider: "workers-ai", capabilities: ["audio"] },
        ],
      },
    };
    const config = configFromEnv({ ...testEnv, EDGECLAW_CONFIG: JSON.stringify(raw) });
    const corrupt = new TextEncoder().encode("OggS and then nothing a decoder could open");
    await transcribeAudio({ bytes: corrupt, mimeType: "audio/ogg", config, env: testEnv, meter });
    expect(admitted.map((start) => start.model.ref)).toEqual([
      "fakeopenai/whisper-1",
      "workers-ai/@cf/openai/whisper-large-v3-turbo",
    ]);
    expect(settled.map((entry) => entry.outcome.ok)).toEqual([false, false]);
  });
});
