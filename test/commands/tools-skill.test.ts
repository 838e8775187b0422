import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { writeFile } from "../../functions/agent/workspace.ts";
import { ensureWorkspaceSeeded } from "../../functions/agent/workspace-seeding.ts";
import { collectRunEvents, sessionStub, webchatEvent } from "../durable-objects/helpers.ts";

/**
 * `/tools` and `/skill` through the SessionDO's command path (web chat, the operator): the tool
 * list is the toolset a run here would get; `/skill` hands the request to the model with the
 * skill's location, read from the agent's Postgres workspace.
 */
async function ask(text: string, agentId = "main"): Promise<string> {
  const key = `agent:${agentId}:webchat:tools-${crypto.randomUUID().slice(0, 8)}`;
  const event: RoutedEvent = { ...webchatEvent(key, text), agentId };
  const events = await collectRunEvents(await sessionStub(key).chat(event));
  const done = events.find((e) => e.type === "done");
  return done?.type === "done" ? done.text : JSON.stringify(events);
}

describe("/tools", () => {
  it("lists the tools a run here gets, compact by default and with descriptions on request", async () => {
    const compact = await ask("/tools");
    expect(compact).toMatch(/^🧰 Tools available now \(\d+\): /);
    for (const name of ["read", "write", "edit", "web_fetch", "session_status", "cron"])
      expect(compact).toContain(name);
    // No search provider is set up in the test env, so no run would get web_search.
    expect(compact).not.toContain("web_search");
    const verbose = await ask("/tools verbose");
    expect(verbose).toContain("• web_fetch — Fetch a web page (http or https) with a plain GET");
    expect(await ask("/tools everything")).toBe("Usage: /tools [compact|verbose]");
  });
});

describe("/skill", () => {
  it("lists the agent's skills, hands a request to the model with the skill's location, and refuses unknown names", async () => {
    const agentId = `skillcmd${crypto.randomUUID().slice(0, 6)}`;
    await ensureWorkspaceSeeded(env, agentId, { "AGENTS.md": "rules" });
    await writeFile(
      env,
      agentId,
      "skills/weather/SKILL.md",
      "---\nname: weather\ndescription: Forecasts from the met service.\n---\nUse the met API.\n",
    );
    await writeFile(
      env,
      agentId,
      "skills/private/SKILL.md",
      "---\nname: private\ndescription: Not a command.\nuser-invocable: false\n---\nx\n",
    );
    expect(await ask("/skill", agentId)).toBe(
      "Usage: /skill <name> [request]. Skills:\n• weather — Forecasts from the met service.",
    );
    // The forwarded request reaches the (fake) model, which echoes the user text it got.
    const answer = await ask("/skill weather tomorrow in Oslo", agentId);
    expect(answer).toContain(
      'Use the "weather" skill: read skills/weather/SKILL.md with the read tool first, then follow it.',
    );
    expect(answer).toContain("tomorrow in Oslo");
    expect(await ask("/skill nope", agentId)).toBe('No skill named "nope". Available: weather.');
    expect(await ask("/skill private", agentId)).toBe(
      'No skill named "private". Available: weather.',
    );
  });
});
