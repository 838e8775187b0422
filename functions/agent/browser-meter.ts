import type { MeterOutcome, MeterStart } from "./metering.ts";
import type { BrowserSettings } from "./browser-wire.ts";
import type { ResolvedModel } from "./providers/types.ts";

/**
 * The browser's time as the session's meter sees it (issue 25: browser time metered and under the
 * budgets): each `browser` call is one call of kind "browser", admitted against the budgets before
 * the browser Worker is asked anything — a budget with no room refuses it and no browser opens —
 * and settled with the browser time the call was charged (recorded as the call's duration, so
 * /usage cost shows browser seconds).
 *
 * - Price: Browser Run's published rate, $0.09 per browser-hour past the Workers Paid plan's 10
 *   included hours a month (developers.cloudflare.com/browser-run/pricing). The included hours
 *   are the account's, not a session's, so every second is priced: an overestimate while the
 *   account is within them, never an underestimate. Concurrency charges ($2 per browser past 10,
 *   averaged monthly) are not per call and are not counted.
 * - Worst case (what admit reserves): what one call can be charged — the browser's open time
 *   since the previous call (at most the idle close, or keep_alive when the cleanup is off), the
 *   tail of a browser the idle close ended since (the same bound), and the action itself (its
 *   launch or reconnect, the action and its snapshot, each within actionTimeoutSeconds).
 */
export const BROWSER_RUN_USD_PER_HOUR = 0.09;

const BROWSER_MODEL: ResolvedModel = {
  ref: "cloudflare/browser-run",
  providerId: "cloudflare",
  modelId: "browser-run",
  api: "openai-completions",
  baseUrl: "",
  headers: {},
  maxTokens: 0,
  contextWindow: 0,
  // Priced (by time, below), so a USD cap counts it rather than refusing it as unpriced.
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  idleTimeoutMs: 0,
  native: false,
  acceptsImages: false,
  cacheRetention: "none",
  reasoning: false,
};

export function browserUsd(ms: number): number {
  return (ms / 3_600_000) * BROWSER_RUN_USD_PER_HOUR;
}

/** The most one call can be charged, in ms. */
export function browserWorstMs(settings: BrowserSettings): number {
  // The object's alarm closes a quiet browser after this (session-do.ts `touch`).
  const openBetweenCalls = settings.tabCleanup ? settings.idleMs : settings.keepAliveMs;
  return 2 * openBetweenCalls + 3 * settings.actionTimeoutMs;
}

/** One browser call for the meter, keyed by its tool call so a resumed run records it once. */
export function browserCallStart(settings: BrowserSettings, toolCallId: string): MeterStart {
  return {
    id: `browser:${toolCallId}`,
    model: BROWSER_MODEL,
    request: { system: "", messages: [], tools: [], maxTokens: 0 },
    worstCase: { tokens: 0, usd: browserUsd(browserWorstMs(settings)) },
  };
}

export function browserCallOutcome(browserMs: number): MeterOutcome {
  return {
    ok: true,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    costUsd: browserUsd(browserMs),
    billedMs: browserMs,
  };
}
