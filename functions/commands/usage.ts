import type { SessionSpendView } from "./session-control.ts";

/**
 * `/usage off|tokens|full|reset|cost` (tools/slash-commands): the per-reply usage footer of this
 * session (`reset`, `inherit`, `clear`, `default` drop the override so `messages.responseUsage`
 * applies again; legacy `on` = tokens), or the session's spend.
 */
export const RESPONSE_USAGE_MODES = ["off", "tokens", "full"] as const;
export type ResponseUsageMode = (typeof RESPONSE_USAGE_MODES)[number];

export type UsageAction =
  | { kind: "show" }
  | { kind: "set"; mode: ResponseUsageMode }
  | { kind: "clear" }
  | { kind: "cost" }
  | { kind: "invalid"; arg: string };

export function parseUsageArgs(args: string): UsageAction {
  const arg = args.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  if (!arg) return { kind: "show" };
  if (arg === "cost") return { kind: "cost" };
  if (arg === "on") return { kind: "set", mode: "tokens" };
  if ((RESPONSE_USAGE_MODES as readonly string[]).includes(arg))
    return { kind: "set", mode: arg as ResponseUsageMode };
  if (["reset", "inherit", "clear", "default"].includes(arg)) return { kind: "clear" };
  return { kind: "invalid", arg };
}

function tokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
  if (n >= 1_000) return `${(n / 1_000).toFixed(1).replace(/\.0$/, "")}k`;
  return String(n);
}

export function usd(value: number): string {
  if (value === 0) return "$0";
  return value < 0.01
    ? `$${value.toFixed(6).replace(/0+$/, "")}`
    : `$${value.toFixed(4).replace(/0{1,2}$/, "")}`;
}

/** The session's spend: model calls by kind at configured prices, plus the platform estimate. */
export function formatSpend(spend: SessionSpendView): string {
  const kinds = Object.entries(spend.byKind)
    .sort((a, b) => b[1].usd - a[1].usd)
    .map(
      ([kind, row]) =>
        `${kind} ${row.calls}${row.ms === undefined ? "" : ` · ${(row.ms / 1000).toFixed(1)} s`} · ${usd(row.usd)}`,
    )
    .join(", ");
  return [
    `💸 Session spend: ${usd(spend.usd)} over ${spend.calls} model call${spend.calls === 1 ? "" : "s"}${kinds ? ` (${kinds})` : ""}`,
    `🧮 Tokens: ${tokens(spend.inputTokens)} in / ${tokens(spend.outputTokens)} out / ${tokens(spend.cacheReadTokens)} cache read / ${tokens(spend.cacheWriteTokens)} cache write${cachedShare(spend) === undefined ? "" : ` · ${cachedShare(spend)}% of input from the cache`}`,
    `☁️ Platform (estimate from list prices): ${usd(spend.platformUsd)}`,
    ...(spend.sandbox?.commands
      ? [
          `🧰 Sandbox: ${spend.sandbox.commands} command${spend.sandbox.commands === 1 ? "" : "s"}, ${spend.sandbox.seconds.toFixed(1)} s` +
            (spend.sandbox.containerSeconds
              ? ` (${spend.sandbox.containerSeconds.toFixed(1)} s in a container, estimate ${usd(spend.sandbox.estimatedUsd)})`
              : ""),
        ]
      : []),
  ].join("\n");
}

/**
 * The share of input tokens read from the provider's prompt cache (issue 24's prompt caching
 * figure): cache reads over everything the model took in; undefined when nothing was cached.
 */
export function cachedShare(usage: {
  inputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}): number | undefined {
  const read = usage.cacheReadTokens ?? 0;
  if (read === 0) return undefined;
  const total = usage.inputTokens + read + (usage.cacheWriteTokens ?? 0);
  return Math.round((read / total) * 100);
}

/** The footer under a reply: `tokens` shows the run's tokens, `full` adds its price and model. */
export function usageFooter(
  mode: ResponseUsageMode,
  run: {
    inputTokens: number;
    outputTokens: number;
    cacheReadTokens?: number;
    cacheWriteTokens?: number;
    costUsd: number;
    modelRef: string | null;
  },
): string {
  if (mode === "off") return "";
  const share = cachedShare(run);
  const base = `Usage: ${tokens(run.inputTokens)} in / ${tokens(run.outputTokens)} out${share === undefined ? "" : ` · ${share}% cached`}`;
  return mode === "full"
    ? `${base} · ${usd(run.costUsd)}${run.modelRef ? ` · ${run.modelRef}` : ""}`
    : base;
}
