import * as z from "zod";
import type { CommandSpec } from "./command-spec.ts";
import { adminRequest, UsageError } from "./http.ts";
import { renderTable } from "./table.ts";

/**
 * `edgeclaw budgets list | show | raise | reset` over /admin/budgets. A raise replaces the config's
 * cap for the current period only; a reset starts the period's count again. Both are audited by the
 * gateway.
 */

const windowSchema = z.object({
  period: z.enum(["day", "month"]),
  key: z.string(),
  resetsAt: z.number(),
  limitUsd: z.number().optional(),
  limitTokens: z.number().optional(),
  spentUsd: z.number(),
  spentTokens: z.number(),
  reservedUsd: z.number(),
  reservedTokens: z.number(),
  limitSandboxSeconds: z.number().optional(),
  spentSandboxSeconds: z.number().default(0),
  runningSandboxSeconds: z.number().default(0),
  raised: z.boolean(),
});
const scopeSchema = z.object({
  scope: z.string(),
  windows: z.array(windowSchema),
  timeZone: z.string().optional(),
});
const listSchema = z.object({ timeZone: z.string(), scopes: z.array(scopeSchema) });
const actionSchema = z.object({ ok: z.literal(true), scope: z.string(), window: windowSchema });

type Window = z.infer<typeof windowSchema>;

/** Dollars as people read them: cents, or four decimals for fractions of a cent. */
const usd = (value: number | undefined) =>
  value === undefined
    ? undefined
    : value === 0 || value >= 0.01
      ? `$${value.toFixed(2)}`
      : `$${value.toFixed(4)}`;

/** `2026-12-01 00:00` in the budgets' time zone (the one their days and months are counted in). */
function localTime(ms: number, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    })
      .formatToParts(ms)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

function rows(
  scope: string,
  windows: Window[],
  timeZone: string,
): Array<Array<string | number | undefined>> {
  return windows.map((w) => [
    scope,
    w.key.replace(":", " "),
    usd(w.spentUsd),
    w.limitUsd === undefined ? "none" : usd(w.limitUsd),
    w.limitTokens !== undefined ? `${w.spentTokens} / ${w.limitTokens}` : String(w.spentTokens),
    w.reservedUsd > 0 ? usd(w.reservedUsd) : "",
    sandbox(w),
    w.raised ? "yes" : "",
    localTime(w.resetsAt, timeZone),
  ]);
}

/** Sandbox command time: used (finished + running so far) / cap, in seconds. */
function sandbox(w: Window): string {
  const used = Math.round(w.spentSandboxSeconds + w.runningSandboxSeconds);
  if (w.limitSandboxSeconds === undefined) return used ? `${used} s` : "";
  return `${used} / ${w.limitSandboxSeconds} s`;
}

const HEADERS = [
  "SCOPE",
  "PERIOD",
  "SPENT",
  "CAP",
  "TOKENS",
  "IN FLIGHT",
  "SANDBOX",
  "RAISED",
  "RESETS",
];

function period(value: string | undefined): "day" | "month" {
  if (value === "day" || value === "month") return value;
  throw new UsageError(`period must be day or month, got "${value}"`);
}

function positive(name: string, value: string | boolean | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (typeof value !== "string" || !Number.isFinite(number) || number <= 0)
    throw new UsageError(`--${name} must be a positive number, got "${value}"`);
  return number;
}

export const BUDGET_COMMANDS: CommandSpec[] = [
  {
    name: "budgets list",
    args: [],
    options: {},
    summary: "spend and caps of the global and per-agent budgets (today and this month)",
    async run({ connection, print }) {
      const json = await adminRequest(connection(), "GET", "/budgets");
      const data = listSchema.parse(json);
      print(
        json,
        () =>
          `${renderTable(
            HEADERS,
            data.scopes.flatMap((scope) => rows(scope.scope, scope.windows, data.timeZone)),
          )}\n(times in ${data.timeZone}, budgets.timeZone)`,
      );
      return 0;
    },
  },
  {
    name: "budgets show",
    args: ["scope"],
    options: {},
    summary: "one budget scope (global, agent:<id>, session:<key>, sender:<channel>:<id>)",
    async run({ args: [scope], connection, print }) {
      const json = await adminRequest(
        connection(),
        "GET",
        `/budgets/${encodeURIComponent(scope!)}`,
      );
      const data = scopeSchema.parse(json);
      const timeZone = data.timeZone ?? "UTC";
      print(
        json,
        () =>
          `${renderTable(HEADERS, rows(data.scope, data.windows, timeZone))}\n(times in ${timeZone})`,
      );
      return 0;
    },
  },
  {
    name: "budgets raise",
    args: ["scope", "period"],
    options: { usd: "amount", tokens: "n", "sandbox-seconds": "n" },
    summary: "raise a scope's cap for the current day or month (audited)",
    async run({ args: [scope, which], options, connection, print }) {
      const body = {
        period: period(which),
        usd: positive("usd", options.usd),
        tokens: positive("tokens", options.tokens),
        sandboxSeconds: positive("sandbox-seconds", options["sandbox-seconds"]),
      };
      if (body.usd === undefined && body.tokens === undefined && body.sandboxSeconds === undefined)
        throw new UsageError("give --usd, --tokens and/or --sandbox-seconds");
      const json = await adminRequest(
        connection(),
        "POST",
        `/budgets/${encodeURIComponent(scope!)}/raise`,
        body,
      );
      const data = actionSchema.parse(json);
      print(
        json,
        () =>
          `Raised ${data.scope} ${data.window.key}: cap ${[usd(data.window.limitUsd), data.window.limitTokens && `${data.window.limitTokens} tokens`, data.window.limitSandboxSeconds && `${data.window.limitSandboxSeconds} sandbox seconds`].filter(Boolean).join(", ")} until ${new Date(data.window.resetsAt).toISOString()}.`,
      );
      return 0;
    },
  },
  {
    name: "budgets reset",
    args: ["scope", "period"],
    options: {},
    summary: "start a scope's current day or month count again from zero (audited)",
    async run({ args: [scope, which], connection, print }) {
      const json = await adminRequest(
        connection(),
        "POST",
        `/budgets/${encodeURIComponent(scope!)}/reset`,
        { period: period(which) },
      );
      const data = actionSchema.parse(json);
      print(json, () => `Reset ${data.scope} ${data.window.key}: spend is now $0.`);
      return 0;
    },
  },
];
