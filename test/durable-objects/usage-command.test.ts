import { describe, expect, it } from "vitest";
import { collectRunEvents, scriptModel, sessionStub, webchatEvent } from "./helpers.ts";
import { newScenario } from "../agent/model-helpers.ts";
import type { RunEvent } from "../../durable-objects/session-api.ts";

function replyOf(events: RunEvent[]): string {
  const done = events.find((event) => event.type === "done");
  if (done?.type === "done") return done.text;
  return events
    .filter((event) => event.type === "notice")
    .map((event) => (event.type === "notice" ? event.text : ""))
    .join("\n");
}

describe("/usage and /status show what the session spent", () => {
  it("/usage full adds tokens, price and model under each answer; /usage cost and /status show the session's spend; /usage reset turns it back off", async () => {
    const scenario = newScenario("usage-cmd");
    await scriptModel(scenario, [
      { type: "text", text: "first answer", usage: { input: 1200, output: 340 } },
      { type: "text", text: "second answer", usage: { input: 800, output: 60 } },
      { type: "text", text: "cached answer", usage: { input: 200, output: 50, cacheRead: 1800 } },
    ]);
    const key = `agent:main:usage-cmd-${crypto.randomUUID()}`;
    const stub = sessionStub(key);
    const say = async (text: string) =>
      replyOf(await collectRunEvents(await stub.chat(webchatEvent(key, text))));

    expect(await say("/usage")).toBe("Usage footer: off. Options: off, tokens, full, reset, cost.");
    expect(await say("/usage full")).toBe("Usage footer: full.");
    // 1200 × $3/M + 340 × $15/M = $0.0087
    expect(await say(`hello [scenario:${scenario}]`)).toBe(
      "first answer\n\nUsage: 1.2k in / 340 out · $0.0087 · fakeanthropic/claude-test",
    );

    const cost = await say("/usage cost");
    expect(cost).toMatch(/^💸 Session spend: \$0\.0087 over 1 model call \(turn 1 · \$0\.0087\)/);
    expect(cost).toMatch(/🧮 Tokens: 1\.2k in \/ 340 out \/ 0 cache read \/ 0 cache write/);
    expect(cost).toMatch(/☁️ Platform \(estimate from list prices\): \$0\.0000\d+/);
    expect(await say("/status")).toMatch(
      /💸 Spend: \$0\.0087 over 1 model call · platform ~\$0\.0000\d+ \(estimate\)/,
    );

    expect(await say("/usage reset")).toBe("Usage footer back to the default (off).");
    expect(await say(`again [scenario:${scenario}]`)).toBe("second answer");
    expect(await say("/usage cost")).toMatch(/^💸 Session spend: \$0\.012 over 2 model calls/);

    // The share of input read from the prompt cache: 1,800 of 2,000 tokens.
    await say("/usage tokens");
    expect(await say(`cached [scenario:${scenario}]`)).toBe(
      "cached answer\n\nUsage: 200 in / 50 out · 90% cached",
    );
    expect(await say("/usage cost")).toMatch(
      /🧮 Tokens: 2\.2k in \/ 450 out \/ 1\.8k cache read \/ 0 cache write · 45% of input from the cache/,
    );
  });
});
