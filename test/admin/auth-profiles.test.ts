import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { withDb } from "../../functions/db/client.ts";
import { callWorker, TOKEN } from "../openai/scripted-sessions.ts";
import { keyError, rig, usageOf } from "../agent/auth-profile-helpers.ts";
import { newScenario } from "../agent/model-helpers.ts";
import type { Env } from "../../workers/env.ts";

/**
 * GET /admin/auth-profiles and POST /admin/auth-profiles/reset (#24 item 5): the profiles in the
 * order the next call tries them, with their secret's name and state, and no key material in any
 * answer; a reset forgets a cooldown and is audited.
 */
function adminCall(r: ReturnType<typeof rig>, path: string, body?: unknown) {
  const request = new Request(`https://edgeclaw.test/admin/auth-profiles${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return callWorker(request, { EDGECLAW_CONFIG: r.config, ...r.secrets });
}

describe("admin: auth profiles", () => {
  it("lists each profile with its secret's name, its state and the try order; a reset clears a cooldown", async () => {
    const r = rig();
    await keyError(r.keys.first, { type: "error", status: 429, errorType: "rate_limit_error" });
    const say = await r.session("admin-profiles");
    await say(`hi [scenario:${newScenario("admin-profiles")}]`);
    await keyError(r.keys.first, null);

    const res = await adminCall(r, "");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(r.keys.first);
    expect(text).not.toContain(r.keys.second);
    const body = JSON.parse(text);
    const mine = body.providers.find((p: { provider: string }) => p.provider === r.provider);
    expect(mine.orderedBy).toBe("auth.order");
    expect(mine.profiles).toMatchObject([
      {
        id: r.second,
        secret: `${r.provider.toUpperCase()}_API_KEY_SECOND`,
        secretSet: true,
        state: "ready",
        errorCount: 0,
      },
      {
        id: r.first,
        secret: `${r.provider.toUpperCase()}_API_KEY_FIRST`,
        secretSet: true,
        state: "cooldown",
        reason: "rate_limit",
        errorCount: 1,
      },
    ]);
    expect(Date.parse(mine.profiles[1].until)).toBeGreaterThan(Date.now());
    expect(mine.profiles[0].lastGood).toMatch(/^\d{4}-\d\d-\d\dT/);

    const unknown = await adminCall(r, "/reset", { profiles: ["nobody:here"] });
    expect(unknown.status).toBe(404);
    const reset = await adminCall(r, "/reset", { profiles: [r.first] });
    expect(reset.status).toBe(200);
    expect(await reset.json()).toEqual({ ok: true, reset: 1 });
    expect(await usageOf(r.first)).toBeUndefined();
    const rows = await withDb(env as unknown as Env, (db) =>
      db.execute<{ kind: string }>(
        sql`select kind from audit_events where kind = 'auth_profile.reset' and target = ${r.first}`,
      ),
    );
    expect(rows.rows).toHaveLength(1);
  });

  it("refuses a caller without the gateway token", async () => {
    const r = rig();
    const res = await callWorker(new Request("https://edgeclaw.test/admin/auth-profiles"), {
      EDGECLAW_CONFIG: r.config,
    });
    expect(res.status).toBe(401);
  });
});
