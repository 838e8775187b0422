import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { createToolset, runTool } from "../../../functions/agent/tools/index.ts";
import { toolContext } from "./context.ts";

const config = parseConfig({
  gateway: { auth: { token: "inline-gateway-token-value" } },
  models: {
    providers: {
      inline: {
        baseUrl: "https://models.example",
        apiKey: "sk-inline-abcdefghijklmnop",
        models: [],
      },
      byref: {
        baseUrl: "https://other.example",
        apiKey: { source: "env", id: "OTHER_KEY" },
        models: [],
      },
    },
  },
  agents: {
    list: [{ id: "main", default: true }, { id: "research" }, { id: "writer" }],
    defaults: { subagents: { allowAgents: ["research", "ghost"] } },
  },
});

describe("gateway and agents_list", () => {
  it("gateway shows the config in force with every secret redacted and SecretRefs as refs", async () => {
    const tools = createToolset(config, "main", { senderIsOwner: true });
    const ctx = toolContext({ config });
    const all = await runTool(tools, { name: "gateway", arguments: {} }, ctx);
    expect(all.isError).toBeFalsy();
    expect(all.content).not.toContain("inline-gateway-token-value");
    expect(all.content).not.toContain("sk-inline-abcdefghijklmnop");
    const models = JSON.parse(
      (await runTool(tools, { name: "gateway", arguments: { path: "models.providers" } }, ctx))
        .content,
    ) as { value: Record<string, { apiKey: unknown; baseUrl: string }> };
    expect(models.value.inline?.apiKey).toBe("[redacted]");
    expect(models.value.byref?.apiKey).toEqual({ source: "env", id: "OTHER_KEY" });
    expect(models.value.inline?.baseUrl).toBe("https://models.example");
    const write = await runTool(tools, { name: "gateway", arguments: { action: "restart" } }, ctx);
    expect(write).toMatchObject({ isError: true });
    expect(write.content).toContain("read-only");
  });

  it("gateway is the owner's only", async () => {
    expect(createToolset(config, "main", {}).map((tool) => tool.name)).not.toContain("gateway");
    const owned = createToolset(config, "main", { senderIsOwner: true });
    const refused = await runTool(
      owned,
      { name: "gateway", arguments: {} },
      toolContext({ config, senderIsOwner: false }),
    );
    expect(refused).toMatchObject({ isError: true });
    expect(refused.content).toContain("owner");
  });

  it("agents_list names itself and the configured agents allowAgents lets it spawn under", async () => {
    const tools = createToolset(config, "main", {});
    const answer = JSON.parse(
      (await runTool(tools, { name: "agents_list", arguments: {} }, toolContext({ config })))
        .content,
    ) as { agents: Array<{ id: string; self?: boolean }> };
    expect(answer.agents.map((agent) => agent.id)).toEqual(["main", "research"]);
    expect(answer.agents[0]?.self).toBe(true);
  });
});
