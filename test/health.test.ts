import { env, SELF } from "cloudflare:test";
import { describe, expect, it, onTestFinished } from "vitest";
import { sql } from "drizzle-orm";
import { signRequest } from "../functions/channels/companion/signature.ts";
import { withDb } from "../functions/db/client.ts";

const BASE = "https://edgeclaw.test";
/** The test config's key for the polling Telegram account "poll" (deployment "tgall"). */
const TGALL = { id: "tgall", secret: "test-companion-tgall-secret" };

async function companionCall(path: string, body: unknown): Promise<Response> {
  const text = JSON.stringify(body);
  const headers = await signRequest(TGALL, {
    method: "POST",
    path,
    body: new TextEncoder().encode(text),
    timestamp: Math.floor(Date.now() / 1000),
  });
  return SELF.fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: text,
  });
}

/** A companion of deployment "tgall" that holds the lease and reports a connector error naming an env var. */
async function reportFailingConnector(error: string): Promise<void> {
  const instanceId = `health-${crypto.randomUUID()}`;
  const lease = await companionCall("/internal/companion/lease", { instanceId, action: "acquire" });
  expect(lease.status, await lease.clone().text()).toBe(200);
  const { epoch } = (await lease.json()) as { epoch: number };
  onTestFinished(async () => {
    await companionCall("/internal/companion/lease", { instanceId, action: "release" });
  });
  const status = await companionCall("/internal/companion/status", {
    epoch,
    instanceId,
    connectors: [{ channel: "telegram", accountId: "poll", state: "error", lastError: error }],
  });
  expect(status.status, await status.clone().text()).toBe(200);
}

describe("health", () => {
  it("answers live", async () => {
    const res = await SELF.fetch(`${BASE}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, status: "live" });
  });

  it("shows a stranger only liveness; the companion's detail needs the gateway token", async () => {
    const error = "TEST_TELEGRAM_POLL_BOT_TOKEN was refused by Telegram: 401 Unauthorized";
    await reportFailingConnector(error);

    const open = await SELF.fetch(`${BASE}/health`);
    const openText = await open.text();
    expect(JSON.parse(openText)).toEqual({ ok: true, status: "live" });
    for (const secretish of ["TEST_TELEGRAM_POLL_BOT_TOKEN", "401 Unauthorized", "poll", "tgall"])
      expect(openText, secretish).not.toContain(secretish);

    const refused = await SELF.fetch(`${BASE}/admin/companion/status`);
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain("TEST_TELEGRAM_POLL_BOT_TOKEN");

    const detail = await SELF.fetch(`${BASE}/admin/companion/status`, {
      headers: { authorization: "Bearer test-gateway-token" },
    });
    expect(detail.status).toBe(200);
    const body = (await detail.json()) as {
      companion: { deployments: Array<Record<string, unknown>> };
    };
    expect(body.companion.deployments.find((d) => d.deployment === "tgall")).toMatchObject({
      leaseHeld: true,
      connectors: [{ channel: "telegram", accountId: "poll", state: "error", lastError: error }],
    });
  });

  it("reaches Postgres through the Neon driver", async () => {
    const rows = await withDb(env, (db) =>
      db.execute(sql`select to_regclass('public.sessions')::text as name`),
    );
    expect(rows.rows[0]).toEqual({ name: "sessions" });
  });
});
