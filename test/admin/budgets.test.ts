import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { withDb } from "../../functions/db/client.ts";
import { callWorker, TOKEN } from "../openai/scripted-sessions.ts";
import { configWith, sessionWithConfig } from "../durable-objects/budget-helpers.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  webchatEvent,
} from "../durable-objects/helpers.ts";
import { newScenario } from "../agent/model-helpers.ts";
import type { Env } from "../../workers/env.ts";

const BASE = "https://edgeclaw.test/admin/budgets";

function adminCall(
  config: string,
  path: string,
  init: { method?: string; body?: unknown; token?: string | null } = {},
) {
  const headers = new Headers();
  if (init.token !== null) headers.set("authorization", `Bearer ${init.token ?? TOKEN}`);
  if (init.body !== undefined) headers.set("content-type", "application/json");
  const request = new Request(`${BASE}${path}`, {
    method: init.method ?? "GET",
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return callWorker(request, { EDGECLAW_CONFIG: config });
}

async function auditKinds(scope: string): Promise<string[]> {
  const rows = await withDb(env as unknown as Env, (db) =>
    db.execute<{ kind: string }>(
      sql`select kind from audit_events where detail->>'scope' = ${scope} order by id`,
    ),
  );
  return rows.rows.map((row) => row.kind);
}

describe("admin API: budgets", () => {
  it("refuses a caller without the gateway token (list, raise, reset)", async () => {
    const config = configWith({ budgets: { global: { day: { usd: 1 } } } });
    expect((await adminCall(config, "", { token: null })).status).toBe(401);
    expect(
      (
        await adminCall(config, "/global/raise", {
          method: "POST",
          body: { period: "day", usd: 100 },
          token: "wrong",
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await adminCall(config, "/global/reset", {
          method: "POST",
          body: { period: "day" },
          token: null,
        })
      ).status,
    ).toBe(401);
  });

  it("a capped session answers again after the operator raises the cap; reset zeroes the period; both audited", async () => {
    const scenario = newScenario("budget-admin");
    await scriptModel(scenario, [
      { type: "text", text: "answer after the raise", usage: { input: 100, output: 10 } },
    ]);
    const key = `agent:main:budget-admin-${crypto.randomUUID()}`;
    const scope = `session:${key}`;
    const config = configWith({ budgets: { session: { day: { usd: 0.00000001 } } } });
    const stub = await sessionWithConfig(key, config);

    const refused = await collectRunEvents(
      await stub.chat(webchatEvent(key, `first [scenario:${scenario}]`)),
    );
    expect(refused.at(-1)).toMatchObject({ type: "error", code: "budget" });
    expect(await modelRequests(scenario)).toHaveLength(0);

    const shown = await adminCall(config, `/${encodeURIComponent(scope)}`);
    expect(shown.status).toBe(200);
    expect(await shown.json()).toMatchObject({
      scope,
      windows: [{ period: "day", limitUsd: 0.00000001, spentUsd: 0, raised: false }],
    });

    const raised = await adminCall(config, `/${encodeURIComponent(scope)}/raise`, {
      method: "POST",
      body: { period: "day", usd: 5 },
    });
    expect(raised.status).toBe(200);
    expect(await raised.json()).toMatchObject({ ok: true, window: { limitUsd: 5, raised: true } });

    const answered = await collectRunEvents(
      await stub.chat(webchatEvent(key, `second [scenario:${scenario}]`)),
    );
    expect(answered.at(-1)).toMatchObject({ type: "done", text: "answer after the raise" });
    expect(await modelRequests(scenario)).toHaveLength(1);

    const reset = await adminCall(config, `/${encodeURIComponent(scope)}/reset`, {
      method: "POST",
      body: { period: "day" },
    });
    expect(await reset.json()).toMatchObject({
      ok: true,
      window: { spentUsd: 0, spentTokens: 0, limitUsd: 5 },
    });
    expect(await auditKinds(scope)).toEqual(["budget.raise", "budget.reset"]);
  });

  it("refuses a period with no configured cap, a bad scope and a bad body, changing nothing", async () => {
    const config = configWith({ budgets: { global: { day: { usd: 1 } } } });
    const noCap = await adminCall(config, "/global/raise", {
      method: "POST",
      body: { period: "month", usd: 10 },
    });
    expect(noCap.status).toBe(409);
    expect(
      (await adminCall(config, "/nonsense/reset", { method: "POST", body: { period: "day" } }))
        .status,
    ).toBe(400);
    expect(
      (await adminCall(config, "/global/raise", { method: "POST", body: { period: "day" } }))
        .status,
    ).toBe(400);
    expect(
      (
        await adminCall(config, "/global/raise", {
          method: "POST",
          body: { period: "day", usd: -3 },
        })
      ).status,
    ).toBe(400);
    const listed = (await (await adminCall(config, "")).json()) as {
      scopes: Array<{ scope: string; windows: Array<{ raised: boolean }> }>;
    };
    expect(listed.scopes.find((entry) => entry.scope === "global")?.windows[0]?.raised).toBe(false);
  });
});
