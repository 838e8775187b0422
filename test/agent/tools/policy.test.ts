import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { createToolset, runTool } from "../../../functions/agent/tools/index.ts";
import type { AgentTool } from "../../../functions/agent/types.ts";
import { toolContext } from "./context.ts";

const names = (config: unknown, agentId = "main", options = {}) =>
  createToolset(parseConfig(config), agentId, options)
    .map((tool) => tool.name)
    .sort();

const cronTool: AgentTool = {
  name: "cron",
  description: "Schedule jobs.",
  ownerOnly: true,
  parameters: { type: "object", properties: {} },
  execute: async () => ({ content: "scheduled" }),
};

describe("tool policy", () => {
  it("offers every built tool when nothing is configured", () => {
    expect(names({})).toEqual([
      "agents_list",
      "apply_patch",
      "edit",
      "memory_get",
      "memory_search",
      "read",
      "session_status",
      "web_fetch",
      "write",
    ]);
  });

  it("applies profiles: minimal is session_status only, coding and messaging per the docs", () => {
    expect(names({ tools: { profile: "minimal" } })).toEqual(["session_status"]);
    expect(names({ tools: { profile: "coding" } })).toEqual([
      "apply_patch",
      "edit",
      "memory_get",
      "memory_search",
      "read",
      "session_status",
      "web_fetch",
      "write",
    ]);
    expect(names({ tools: { profile: "messaging" } })).toEqual(["session_status"]);
    expect(names({ tools: { profile: "full" } })).toEqual([
      "agents_list",
      "apply_patch",
      "edit",
      "memory_get",
      "memory_search",
      "read",
      "session_status",
      "web_fetch",
      "write",
    ]);
    expect(names({ tools: { profile: "minimal", alsoAllow: ["web_fetch"] } })).toEqual([
      "session_status",
      "web_fetch",
    ]);
  });

  it("deny wins, with groups, wildcards and any case", () => {
    expect(names({ tools: { deny: ["group:fs"] } })).toEqual([
      "agents_list",
      "memory_get",
      "memory_search",
      "session_status",
      "web_fetch",
    ]);
    expect(names({ tools: { deny: ["WEB_*", "group:memory"] } })).toEqual([
      "agents_list",
      "apply_patch",
      "edit",
      "read",
      "session_status",
      "write",
    ]);
    expect(names({ tools: { allow: ["group:fs", "web_fetch"], deny: ["write"] } })).toEqual([
      "apply_patch",
      "edit",
      "read",
      "web_fetch",
    ]);
    expect(names({ tools: { allow: ["group:web"] } })).toEqual(["web_fetch"]);
  });

  it("lets an agent narrow further and replace the profile", () => {
    const config = {
      tools: { profile: "coding", deny: ["edit"] },
      agents: {
        list: [
          { id: "guest", tools: { profile: "minimal" } },
          { id: "reader", tools: { deny: ["write"] } },
        ],
      },
    };
    expect(names(config, "main")).toEqual([
      "apply_patch",
      "memory_get",
      "memory_search",
      "read",
      "session_status",
      "web_fetch",
      "write",
    ]);
    expect(names(config, "guest")).toEqual(["session_status"]);
    expect(names(config, "reader")).toEqual([
      "apply_patch",
      "memory_get",
      "memory_search",
      "read",
      "session_status",
      "web_fetch",
    ]);
  });

  it("rejects allow and alsoAllow in one scope", () => {
    expect(() => parseConfig({ tools: { allow: ["read"], alsoAllow: ["write"] } })).toThrow(
      /allow and alsoAllow cannot both be set/,
    );
  });

  it("has memory_search and memory_get in group:memory (coding, full), not in messaging or minimal; memory.search.enabled false drops them", () => {
    expect(names({ tools: { allow: ["group:memory"] } })).toEqual(["memory_get", "memory_search"]);
    expect(names({ tools: { profile: "messaging" } })).not.toContain("memory_search");
    expect(names({ memory: { search: { enabled: false } } })).not.toContain("memory_get");
  });

  it("drops web_fetch when tools.web.fetch.enabled is false", () => {
    expect(names({ tools: { web: { fetch: { enabled: false } } } })).not.toContain("web_fetch");
  });

  it("leaves owner-only tools out for non-owners and refuses them at run time", async () => {
    const config = parseConfig({});
    expect(
      createToolset(config, "main", { extraTools: [cronTool], senderIsOwner: true }).map(
        (t) => t.name,
      ),
    ).toContain("cron");
    expect(
      createToolset(config, "main", { extraTools: [cronTool], senderIsOwner: false }).map(
        (t) => t.name,
      ),
    ).not.toContain("cron");
    const refused = await runTool(
      [cronTool],
      { name: "cron", arguments: {} },
      toolContext({ senderIsOwner: false }),
    );
    expect(refused).toEqual({
      content: "cron is restricted to the owner of this assistant.",
      isError: true,
    });
    const allowed = await runTool(
      [cronTool],
      { name: "cron", arguments: {} },
      toolContext({ senderIsOwner: true }),
    );
    expect(allowed).toEqual({ content: "scheduled" });
  });

  it("runTool reports unknown tools, unparsable arguments and thrown errors as results, and bounds output", async () => {
    const ctx = toolContext();
    const tools = createToolset(parseConfig({}), "main");
    const unknown = await runTool(tools, { name: "exec", arguments: {} }, ctx);
    expect(unknown.isError).toBe(true);
    expect(unknown.content).toMatch(/"exec" is not available/);
    const raw = await runTool(tools, { name: "read", arguments: { _raw: "{path:" } }, ctx);
    expect(raw).toEqual({ content: "read: the arguments were not valid JSON", isError: true });

    const boom: AgentTool = {
      ...cronTool,
      name: "boom",
      ownerOnly: false,
      execute: async () => {
        throw new Error("kaput");
      },
    };
    expect(await runTool([boom], { name: "boom", arguments: {} }, ctx)).toEqual({
      content: "boom failed: kaput",
      isError: true,
    });
    const huge: AgentTool = {
      ...cronTool,
      name: "huge",
      ownerOnly: false,
      execute: async () => ({ content: "x".repeat(200_000) }),
    };
    const bounded = await runTool([huge], { name: "huge", arguments: {} }, ctx);
    expect(bounded.content.length).toBeLessThanOrEqual(64_000);
    expect(bounded.content).toMatch(/tool output truncated: 200000 chars/);
  });
});
