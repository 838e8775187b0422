import { Hono, type Context } from "hono";
import * as z from "zod";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { withDb } from "../functions/db/client.ts";
import { allWindowsFor, type BudgetWindow } from "../functions/agent/budget-scopes.ts";
import { recordAudit } from "../functions/db/audit.ts";
import { listAgents } from "../functions/routing/agents.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";

/**
 * /admin/budgets (gateway token): what each budget scope has spent and holds in the current day and
 * month, and the operator's two levers — raise a period's cap, or reset a period's count. Both are
 * audited (`budget.raise`, `budget.reset`). The counters live in the scope's BudgetDO; the caps come
 * from config `budgets`, a raise replaces the config's cap until that period ends.
 *
 *   GET  /admin/budgets                      global + every agent scope with a cap
 *   GET  /admin/budgets/:scope               one scope (`session:<key>`, `sender:<channel>:<id>`, …)
 *   POST /admin/budgets/:scope/raise  { period, usd?, tokens?, sandboxSeconds? }
 *   POST /admin/budgets/:scope/reset  { period }
 */
type BudgetContext = Context<{ Bindings: Env }>;

export const adminBudgets = new Hono<{ Bindings: Env }>();
adminBudgets.use("*", requireGatewayToken);

const scopeSchema = z
  .string()
  .regex(
    /^(global|(agent|session|sender):\S{1,300})$/,
    "scope is global, agent:<id>, session:<key> or sender:<channel>:<id>",
  );
const periodSchema = z.enum(["day", "month"]);
const raiseSchema = z
  .object({
    period: periodSchema,
    usd: z.number().positive().optional(),
    tokens: z.number().int().positive().optional(),
    sandboxSeconds: z.number().int().positive().optional(),
  })
  .strict()
  .refine(
    (body) =>
      body.usd !== undefined || body.tokens !== undefined || body.sandboxSeconds !== undefined,
    { message: "give usd, tokens and/or sandboxSeconds" },
  );
const resetSchema = z.object({ period: periodSchema }).strict();

function fail(c: BudgetContext, status: 400 | 404 | 409, code: string, message: string) {
  return c.json({ error: { message, type: "admin_error", code } }, status);
}

function stub(env: Env, scope: string) {
  return env.BUDGETS.get(env.BUDGETS.idFromName(scope));
}

function windowsOf(env: Env, scope: string, now: number): BudgetWindow[] {
  // Model caps and sandbox time caps, one window per period.
  return allWindowsFor(scope, configFromEnv(env).budgets, now);
}

async function scopeState(env: Env, scope: string, now: number) {
  const windows = windowsOf(env, scope, now);
  return { scope, windows: windows.length ? await stub(env, scope).state({ windows, now }) : [] };
}

adminBudgets.get("/", async (c) => {
  const config = configFromEnv(c.env);
  const now = Date.now();
  const scopes = ["global", ...listAgents(config).map((agent) => `agent:${agent.id}`)];
  const states = await Promise.all(scopes.map((scope) => scopeState(c.env, scope, now)));
  return c.json({
    timeZone: config.budgets.timeZone,
    scopes: states.filter((state) => state.windows.length),
  });
});

adminBudgets.get("/:scope", async (c) => {
  const scope = scopeSchema.safeParse(c.req.param("scope"));
  if (!scope.success) return fail(c, 400, "invalid_scope", scope.error.issues[0]!.message);
  return c.json(await scopeState(c.env, scope.data, Date.now()));
});

for (const action of ["raise", "reset"] as const) {
  adminBudgets.post(`/:scope/${action}`, async (c) => {
    const scope = scopeSchema.safeParse(c.req.param("scope"));
    if (!scope.success) return fail(c, 400, "invalid_scope", scope.error.issues[0]!.message);
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return fail(c, 400, "invalid_body", "body must be JSON");
    }
    const body = (action === "raise" ? raiseSchema : resetSchema).safeParse(raw);
    if (!body.success)
      return fail(
        c,
        400,
        "invalid_body",
        body.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "),
      );
    const now = Date.now();
    const window = windowsOf(c.env, scope.data, now).find(
      (candidate) => candidate.period === body.data.period,
    );
    if (!window)
      return fail(
        c,
        409,
        "no_cap",
        `budgets has no ${body.data.period} cap for ${scope.data}; set one in the config first`,
      );
    const { usd, tokens, sandboxSeconds } = body.data as {
      usd?: number;
      tokens?: number;
      sandboxSeconds?: number;
    };
    const before = (await stub(c.env, scope.data).state({ windows: [window], now }))[0];
    const after =
      action === "raise"
        ? await stub(c.env, scope.data).raise({ window, usd, tokens, sandboxSeconds, now })
        : await stub(c.env, scope.data).reset({ window, now });
    const actor = c.req.header("cf-connecting-ip")?.trim() || "unknown";
    await withDb(c.env, (db) =>
      recordAudit(db, {
        action: `budget.${action}`,
        actor,
        target: scope.data,
        detail: { scope: scope.data, period: window.key, before, after },
        at: now,
      }),
    );
    return c.json({ ok: true, scope: scope.data, window: after });
  });
}
