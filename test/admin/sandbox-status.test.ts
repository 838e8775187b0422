import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { callWorker, TOKEN } from "../openai/scripted-sessions.ts";

/**
 * GET /admin/sandbox/status against the test config's agents: "sandboxed" and "asker" run commands
 * on the companion (test/setup/global.ts starts its real sandbox host, so bubblewrap is asked),
 * "contained" in a container per session (the SandboxDO over the loopback container engine);
 * "main" has no sandbox. Asking starts no container.
 */
function status(overrides: Record<string, string> = {}, token: string | null = TOKEN) {
  const headers = new Headers();
  if (token) headers.set("authorization", `Bearer ${token}`);
  return callWorker(
    new Request("https://edgeclaw.test/admin/sandbox/status", { headers }),
    overrides,
  );
}

interface Report {
  agents: Array<{ agentId: string; backend: string; scope: string; network: boolean }>;
  companion?: {
    reachable: boolean;
    error?: string;
    host?: { bwrap: { ok: boolean }; running: unknown[] };
  };
  container?: {
    deployed: boolean;
    problem?: string;
    scopes: Array<{ scope: string; running?: boolean; starts?: number }>;
  };
}

describe("admin API: sandbox status", () => {
  it("names each agent's backend, the companion's reachability and bubblewrap, and the containers", async () => {
    const response = await status();
    expect(response.status).toBe(200);
    const report = (await response.json()) as Report;
    expect(report.agents.map((agent) => agent.agentId)).toContain("sandboxed");
    expect(report.agents.find((agent) => agent.agentId === "main")).toBeUndefined();
    expect(report.agents.find((agent) => agent.agentId === "contained")).toMatchObject({
      backend: "container",
      scope: "session:agent:contained:main",
    });
    expect(report.companion).toMatchObject({ reachable: true, host: { bwrap: { ok: true } } });
    expect(report.container?.deployed).toBe(true);
    expect(report.container?.scopes).toMatchObject([
      { scope: "session:agent:contained:main", running: false, starts: 0 },
    ]);
  });

  it("says when the companion does not answer and when the container was not deployed", async () => {
    const config = JSON.parse(env.EDGECLAW_CONFIG as string) as { companion: { url: string } };
    config.companion.url = "http://127.0.0.1:1";
    const report = (await (
      await status({ EDGECLAW_CONFIG: JSON.stringify(config), EDGECLAW_SANDBOX_CONTAINER: "0" })
    ).json()) as Report;
    expect(report.companion?.reachable).toBe(false);
    expect(report.companion?.error).toContain("did not answer");
    expect(report.container).toMatchObject({ deployed: false, scopes: [] });
    expect(report.container?.problem).toContain("npx edgeclaw deploy");
  });

  it("is behind the gateway token", async () => {
    expect((await status({}, null)).status).toBe(401);
  });
});
