import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { writeFile } from "../../functions/agent/workspace.ts";
import { ensureWorkspaceSeeded } from "../../functions/agent/workspace-seeding.ts";
import { collectRunEvents, sessionStub, webchatEvent } from "../durable-objects/helpers.ts";

/**
 * `/context` and `/models` through the SessionDO's command path (web chat, the operator): the
 * context report is the prompt a run here would build, from the agent's Postgres workspace, its
 * skills and its toolset; /models lists the config's providers and models. Neither calls a model.
 */
async function ask(
  text: string,
  agentId = "main",
  key = `agent:${agentId}:webchat:ctx-${crypto.randomUUID().slice(0, 8)}`,
): Promise<string> {
  const event: RoutedEvent = { ...webchatEvent(key, text), agentId };
  const events = await collectRunEvents(await sessionStub(key).chat(event));
  const done = events.find((e) => e.type === "done");
  return done?.type === "done" ? done.text : JSON.stringify(events);
}

describe("/context", () => {
  it("lists the injected files raw vs injected, the skills catalog, the tools and their schemas, and the transcript", async () => {
    const agentId = `ctx${crypto.randomUUID().slice(0, 6)}`;
    await ensureWorkspaceSeeded(env, agentId, {
      "AGENTS.md": "Be brief.\n".repeat(40),
      "SOUL.md": "calm",
    });
    await writeFile(
      env,
      agentId,
      "skills/weather/SKILL.md",
      "---\nname: weather\ndescription: Forecasts from the met service.\n---\nUse the met API.\n",
    );
    const list = await ask("/context", agentId);
    expect(list).toMatch(
      /^🧠 Context breakdown\nModel: fakeanthropic\/claude-test · window 200,000 tokens/,
    );
    // AGENTS.md is 400 characters, injected whole.
    expect(list).toContain(
      "- AGENTS.md: injected | raw 400 chars (~100 tok) | injected 400 chars (~100 tok)",
    );
    expect(list).toMatch(
      /Skills list \(system prompt text\): [\d,]+ chars \(~[\d,]+ tok\) \(1 skill\)/,
    );
    expect(list).toMatch(/Tools: read, write, edit, .*web_fetch/);
    expect(list).toMatch(/Tool schemas \(JSON\): [\d,]+ chars/);
    expect(list).toContain("Transcript: 0 messages");

    const detail = await ask("/context detail", agentId);
    expect(detail).toMatch(/Top skills \(prompt entry size\):\n- weather: \d+ chars/);
    expect(detail).toMatch(/Top tools \(schema size\):\n- \w+: [\d,]+ chars/);

    const json = JSON.parse(await ask("/context json", agentId));
    expect(json.files.find((file: { path: string }) => file.path === "AGENTS.md")).toMatchObject({
      rawChars: 400,
      injectedChars: 400,
    });
    expect(json.skills.entries).toEqual([{ name: "weather", chars: expect.any(Number) }]);
    expect(json.tools.schemaChars).toBe(
      json.tools.schemas.reduce((sum: number, schema: { chars: number }) => sum + schema.chars, 0),
    );
    expect(await ask("/context everything", agentId)).toBe("Usage: /context [list|detail|json]");
    expect(await ask("/context map", agentId)).toContain("not available on this gateway");
  });

  it("shows a file cut by bootstrapMaxChars and counts the conversation so far", async () => {
    const agentId = `ctxcut${crypto.randomUUID().slice(0, 6)}`;
    await ensureWorkspaceSeeded(env, agentId, { "AGENTS.md": "x".repeat(25_000) });
    const key = `agent:${agentId}:webchat:ctx-${crypto.randomUUID().slice(0, 8)}`;
    await ask("hello there", agentId, key);
    const list = await ask("/context", agentId, key);
    expect(list).toMatch(
      /- AGENTS\.md: \w+ \(max\/file\) \| raw 25,000 chars \(~6,250 tok\) \| injected [\d,]+ chars/,
    );
    expect(list).toMatch(/Transcript: 2 messages/);
  });
});

describe("/models", () => {
  it("lists the providers, then one provider's models with what they declare and the current one", async () => {
    const providers = await ask("/models");
    expect(providers).toContain("• fakeanthropic (");
    expect(providers).toContain("• fakeopenai (");
    expect(providers).toContain("Current: fakeanthropic/claude-test.");
    const models = await ask("/models fakeanthropic");
    expect(models).toContain("• fakeanthropic/claude-test (images) ✓");
    expect(models).toContain("• fakeanthropic/claude-small (30k ctx)");
    expect(await ask("/models fakeanthropic limit=1")).toMatch(
      /page 1\/\d+[\s\S]*More: \/models fakeanthropic 2/,
    );
    expect(await ask("/models nowhere")).toMatch(/^No provider "nowhere" in the config/);
    expect(await ask("/models fakeanthropic 99")).toMatch(/^Page 99 is past the end/);
  });
});
