import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { writeFile } from "../../functions/agent/workspace.ts";
import type { Env } from "../../workers/env.ts";

const BASE = "https://gateway.test/admin/memory";

function call(path: string, init: RequestInit = {}, token = "test-gateway-token") {
  return SELF.fetch(`${BASE}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
}

/** The operator's view of memory (`npx edgeclaw memory status|search|index`), on the default agent. */
describe("/admin/memory", () => {
  it("needs the gateway token", async () => {
    expect((await call("/status", {}, "wrong")).status).toBe(401);
    expect(
      (await call("/search", { method: "POST", body: JSON.stringify({ query: "x" }) }, "wrong"))
        .status,
    ).toBe(401);
  });

  it("indexes (forced), reports status, and searches including private memory", async () => {
    const marker = `quokka${crypto.randomUUID().slice(0, 8)}`;
    await writeFile(
      env as unknown as Env,
      "main",
      `memory/admin-${marker}.md`,
      `The ${marker} lives on Rottnest Island.\n`,
    );
    const index = await call("/index", { method: "POST", body: JSON.stringify({ force: true }) });
    expect(index.status).toBe(200);
    const report = (await index.json()) as {
      agentId: string;
      force: boolean;
      indexed: number;
      files: number;
    };
    expect(report).toMatchObject({ agentId: "main", force: true });
    expect(report.indexed).toBe(report.files);

    const status = (await (await call("/status")).json()) as {
      agentId: string;
      provider: string;
      model: string;
      chunks: number;
      embeddedChunks: number;
      stale: boolean;
    };
    expect(status).toMatchObject({ agentId: "main", provider: "openai", model: "fake-embed" });
    expect(status.chunks).toBeGreaterThan(0);
    expect(status.embeddedChunks).toBe(status.chunks);

    const found = (await (
      await call("/search", {
        method: "POST",
        body: JSON.stringify({ query: `where does the ${marker} live` }),
      })
    ).json()) as {
      mode: string;
      results: Array<{ path: string; snippet: string }>;
    };
    expect(found.mode).toBe("hybrid");
    expect(found.results[0]).toMatchObject({ path: `memory/admin-${marker}.md` });
  });

  it("rejects a bad body and an unknown agent with clear errors", async () => {
    const bad = await call("/search", { method: "POST", body: JSON.stringify({ query: "" }) });
    expect(bad.status).toBe(400);
    const ghost = await call("/status?agent=ghost");
    expect(ghost.status).toBe(404);
    expect(((await ghost.json()) as { error: { code: string } }).error.code).toBe("unknown_agent");
  });
});
