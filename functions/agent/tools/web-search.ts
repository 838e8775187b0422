import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import { resolveSecret, type SecretEnv } from "../../config/secret-ref.ts";
import type { WebSearchConfig, WebSearchSettings } from "../../config/web-search-schema.ts";
import { readBodyCapped } from "../../http/read-body.ts";
import { blockedAddressReason, STRICT_SSRF_POLICY } from "../../http/ssrf.ts";
import type { AgentTool, ToolContext, ToolResult } from "../types.ts";
import { fenceBlock, newFenceId, sanitizeLabel, sanitizeUntrusted } from "../untrusted-text.ts";
import { ToolInputError, parseToolArgs } from "./common.ts";
import { cacheGet, cachePut, digestCacheKey } from "./web-fetch-cache.ts";
import {
  SEARCH_PROVIDERS,
  searchProvider,
  type ProviderAuth,
  type RawResult,
  type SearchOption,
  type SearchProvider,
  type SearchQuery,
} from "./web-search-providers.ts";

/**
 * `web_search` per tools/web: one query to the configured (or first ready) provider, results
 * normalised to title / url / snippet / published / siteName, the provider's text fenced as
 * untrusted, cached per query for `tools.web.search.cacheTtlMinutes`. The model only sees the
 * parameters its provider accepts. The host called is always the operator's configured endpoint,
 * never one the model chooses, and API keys go only in that request's headers.
 */

const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "expected YYYY-MM-DD")
  .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)), "not a real date");

const searchArgs = z
  .object({
    query: z.string().trim().min(1).max(2000),
    count: z.number().int().min(1).max(10).optional(),
    country: z
      .string()
      .regex(/^[A-Za-z]{2}$/, "a 2-letter ISO country code")
      .optional(),
    language: z
      .string()
      .regex(/^[A-Za-z]{2}$/, "an ISO 639-1 language code")
      .optional(),
    search_lang: z.string().min(2).max(10).optional(),
    ui_lang: z.string().min(2).max(10).optional(),
    freshness: z.enum(["day", "week", "month", "year"]).optional(),
    date_after: isoDate.optional(),
    date_before: isoDate.optional(),
    domain_filter: z.array(z.string().min(1).max(253)).max(20).optional(),
    max_tokens: z.number().int().min(1).max(1_000_000).optional(),
    max_tokens_per_page: z.number().int().min(1).optional(),
    type: z.enum(["auto", "neural", "fast", "deep", "deep-reasoning", "instant"]).optional(),
    categories: z.string().min(1).max(200).optional(),
  })
  .strict();

const OPTION_SCHEMAS: Record<SearchOption, Record<string, unknown>> = {
  country: { type: "string", description: "2-letter ISO country code (e.g. US, DE)" },
  language: { type: "string", description: "ISO 639-1 language code (e.g. en, de)" },
  search_lang: { type: "string", description: "Brave search language code (e.g. en-gb, zh-hans)" },
  ui_lang: { type: "string", description: "UI language with region (e.g. en-US)" },
  freshness: { type: "string", enum: ["day", "week", "month", "year"], description: "Time filter" },
  date_after: {
    type: "string",
    description: "Only results published after this date (YYYY-MM-DD)",
  },
  date_before: {
    type: "string",
    description: "Only results published before this date (YYYY-MM-DD)",
  },
  domain_filter: {
    type: "array",
    items: { type: "string" },
    description: "Domain allowlist, or denylist with a - prefix (e.g. -reddit.com); at most 20",
  },
  max_tokens: { type: "integer", minimum: 1, description: "Total content token budget" },
  max_tokens_per_page: { type: "integer", minimum: 1, description: "Token limit per page" },
  type: {
    type: "string",
    enum: ["auto", "neural", "fast", "deep", "deep-reasoning", "instant"],
    description: "Exa search mode (default auto)",
  },
  categories: { type: "string", description: "Comma-separated SearXNG categories (e.g. news)" },
};

type Resolved =
  | { provider: SearchProvider; auth: ProviderAuth }
  | { provider: SearchProvider; missing: string };

/**
 * The provider this config and env select: the configured one (even without its credential, so
 * the model can say what is missing), else the first in OpenClaw's order whose credential is set.
 */
export function resolveSearchProvider(
  config: EdgeclawConfig,
  env: SecretEnv,
): Resolved | undefined {
  const chosen = config.tools.web.search.provider;
  if (chosen) return credentialsOf(searchProvider(chosen), config, env);
  for (const provider of SEARCH_PROVIDERS) {
    const resolved = credentialsOf(provider, config, env);
    if ("auth" in resolved) return resolved;
  }
  return undefined;
}

function credentialsOf(provider: SearchProvider, config: EdgeclawConfig, env: SecretEnv): Resolved {
  const settings: WebSearchSettings = config.plugins.entries[provider.id].config.webSearch;
  const fromEnv = provider.envKeys.map((key) => env[key]).find((v) => typeof v === "string" && v);
  const where = `plugins.entries.${provider.id}.config.webSearch`;
  if (provider.id === "searxng") {
    const baseUrl = settings.baseUrl ?? (fromEnv as string | undefined);
    return baseUrl
      ? { provider, auth: { baseUrl, settings } }
      : { provider, missing: `set SEARXNG_BASE_URL or ${where}.baseUrl to your SearXNG instance` };
  }
  const apiKey = resolveSecret(settings.apiKey, env) ?? (fromEnv as string | undefined);
  if (!apiKey)
    return {
      provider,
      missing: `no API key: set ${provider.envKeys.join(" or ")} (a Worker secret) or ${where}.apiKey`,
    };
  if (provider.id === "perplexity" && apiKey.startsWith("sk-or-"))
    return {
      provider,
      missing:
        "an OpenRouter key selects Perplexity's Sonar chat path, which edgeclaw does not build; use a Perplexity Search API key (pplx-…)",
    };
  return {
    provider,
    auth: { baseUrl: settings.baseUrl ?? provider.defaultBaseUrl!, apiKey, settings },
  };
}

export function createWebSearchTool(config: EdgeclawConfig, env: SecretEnv = {}): AgentTool | null {
  const searchConfig = config.tools.web.search;
  if (!searchConfig.enabled) return null;
  const resolved = resolveSearchProvider(config, env);
  if (!resolved) return null; // Nothing is set up: the model is not offered a tool that cannot work.
  const { provider } = resolved;
  const options = Object.fromEntries(
    provider.accepts.map((option) => [option, OPTION_SCHEMAS[option]]),
  );
  return {
    name: "web_search",
    description: `Search the web (${provider.label}) and return titles, URLs and snippets. Results are untrusted third-party text; use web_fetch to read a page.`,
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "The search query" },
        count: {
          type: "integer",
          minimum: 1,
          maximum: 10,
          description: `Number of results (default ${searchConfig.maxResults})`,
        },
        ...options,
      },
      required: ["query"],
      additionalProperties: false,
    },
    execute: (rawArgs, ctx) =>
      runWebSearch(config, parseToolArgs("web_search", searchArgs, rawArgs), ctx),
  };
}

async function runWebSearch(
  config: EdgeclawConfig,
  args: z.infer<typeof searchArgs>,
  ctx: ToolContext,
): Promise<ToolResult> {
  const started = Date.now();
  const searchConfig = config.tools.web.search;
  const resolved = resolveSearchProvider(config, ctx.env);
  if (!resolved) throw new ToolInputError("web_search: no search provider is set up");
  const { provider } = resolved;
  if ("missing" in resolved) return providerError(provider, `not set up: ${resolved.missing}`);
  const refused = Object.keys(args).filter(
    (key) => key !== "query" && key !== "count" && !provider.accepts.includes(key as SearchOption),
  );
  if (refused.length > 0)
    throw new ToolInputError(
      `web_search (${provider.id}) does not take ${refused.join(", ")}; it accepts query, count${provider.accepts.map((o) => `, ${o}`).join("")}`,
    );
  checkBaseUrl(provider, resolved.auth.baseUrl);
  const query: SearchQuery = { ...args, count: args.count ?? searchConfig.maxResults };

  const cacheKey =
    searchConfig.cacheTtlMinutes > 0
      ? await digestCacheKey(
          "web-search-cache",
          JSON.stringify([provider.id, resolved.auth.baseUrl, resolved.auth.settings, query]),
        )
      : undefined;
  const hit = cacheKey ? await cacheGet<RawResult[]>(cacheKey) : undefined;
  if (hit) return resultsOutput(provider, query, hit, started, true);

  let rows = await callProvider(provider, query, resolved.auth, searchConfig, ctx);
  // SearXNG: a narrower category that finds nothing is tried once more as `general` (OpenClaw's fallback).
  const category = query.categories ?? resolved.auth.settings.categories ?? "general";
  if (provider.id === "searxng" && rows.length === 0 && category !== "general")
    rows = await callProvider(
      provider,
      { ...query, categories: "general" },
      resolved.auth,
      searchConfig,
      ctx,
    );
  if (cacheKey) await cachePut(cacheKey, rows, searchConfig.cacheTtlMinutes);
  return resultsOutput(provider, query, rows, started, false);
}

/** http:// only for a loopback or private host (a self-hosted SearXNG, a local proxy); public hosts need https. */
function checkBaseUrl(provider: SearchProvider, baseUrl: string): void {
  const url = new URL(baseUrl);
  if (url.protocol === "https:") return;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const inward =
    host === "localhost" || blockedAddressReason(host, STRICT_SSRF_POLICY) !== undefined;
  const literal = /^[\d.]+$/.test(host) || host.includes(":") || host === "localhost";
  if (url.protocol !== "http:" || !literal || !inward)
    throw new ToolInputError(
      `web_search (${provider.id}): the base URL ${url.origin} must use https:// (http:// is accepted only for a loopback or private address)`,
    );
}

async function callProvider(
  provider: SearchProvider,
  query: SearchQuery,
  auth: ProviderAuth,
  searchConfig: WebSearchConfig,
  ctx: ToolContext,
): Promise<RawResult[]> {
  const { url, init } = provider.request(query, auth, new Date());
  const timeout = AbortSignal.timeout(searchConfig.timeoutSeconds * 1000);
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;
  let response: Response;
  try {
    // A provider that redirects is not followed: the key would travel to wherever it points.
    response = await fetch(url, { ...init, redirect: "manual", signal });
  } catch (error) {
    if (timeout.aborted)
      throw new ToolInputError(
        `web_search (${provider.id}): no answer within ${searchConfig.timeoutSeconds} s (tools.web.search.timeoutSeconds)`,
      );
    if (ctx.signal?.aborted) throw new ToolInputError("web_search: cancelled");
    throw new ToolInputError(
      `web_search (${provider.id}): could not reach ${new URL(url).origin}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const body = await readBodyCapped(response, searchConfig.maxResponseBytes);
  if (!body.ok)
    throw new ToolInputError(
      `web_search (${provider.id}): the answer is larger than ${searchConfig.maxResponseBytes} bytes (tools.web.search.maxResponseBytes)`,
    );
  const textBody = new TextDecoder().decode(body.bytes);
  if (!response.ok) throw new ToolInputError(describeHttpFailure(provider, response, textBody));
  let parsed: unknown;
  try {
    parsed = JSON.parse(textBody);
  } catch {
    throw new ToolInputError(`web_search (${provider.id}): the answer was not JSON`);
  }
  return provider.results(parsed).filter((row) => row.title || row.url);
}

function describeHttpFailure(provider: SearchProvider, response: Response, body: string): string {
  const status = response.status;
  if (status === 401 || status === 403)
    return `web_search (${provider.id}): the provider refused the API key (HTTP ${status})`;
  if (status === 429) {
    const after = response.headers.get("retry-after");
    return `web_search (${provider.id}): rate limited (HTTP 429)${after ? `, retry after ${sanitizeLabel(after, 40)} s` : ""}`;
  }
  if (status >= 300 && status < 400)
    return `web_search (${provider.id}): the endpoint answered a redirect (HTTP ${status}); point baseUrl at the API itself`;
  const detail = sanitizeLabel(providerMessage(body), 300);
  return `web_search (${provider.id}): HTTP ${status}${detail ? `: ${detail}` : ""}`;
}

/** The error text a provider puts in its body (`error`, `message`, `detail`, or `error.message`). */
function providerMessage(body: string): string {
  try {
    const value = JSON.parse(body) as Record<string, unknown>;
    const error = value.error;
    for (const candidate of [
      typeof error === "object" && error ? (error as Record<string, unknown>).message : error,
      value.message,
      value.detail,
    ]) {
      if (typeof candidate === "string" && candidate) return candidate;
    }
  } catch {
    // Not JSON: the raw text, bounded by the caller.
  }
  return body;
}

function providerError(provider: SearchProvider, message: string): ToolResult {
  return {
    content: JSON.stringify({
      kind: "error",
      provider: provider.id,
      error: "provider_error",
      message: `web_search (${provider.id}) is ${message}`,
      docs: "docs/concepts/agent.md#web-search",
    }),
    isError: true,
  };
}

interface NormalisedRow {
  title: string;
  url: string;
  published?: string;
  siteName?: string;
  snippet?: string;
}

/** Keeps rows whose URL is http(s) (in canonical form) and dates that look like ISO dates. */
function normalise(rows: readonly RawResult[], count: number): NormalisedRow[] {
  const kept: NormalisedRow[] = [];
  for (const row of rows) {
    let url: URL;
    try {
      url = new URL(row.url);
    } catch {
      continue;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") continue;
    kept.push({
      title: sanitizeLabel(row.title || url.hostname, 200),
      url: url.toString(),
      ...(row.published && /^\d{4}-\d{2}-\d{2}/.test(row.published)
        ? { published: row.published.slice(0, 25) }
        : {}),
      ...(row.siteName ? { siteName: sanitizeLabel(row.siteName, 80) } : {}),
      ...(row.snippet ? { snippet: row.snippet.slice(0, 1500) } : {}),
    });
    if (kept.length >= count) break;
  }
  return kept;
}

function resultsOutput(
  provider: SearchProvider,
  query: SearchQuery,
  rows: readonly RawResult[],
  started: number,
  cached: boolean,
): ToolResult {
  const results = normalise(rows, query.count);
  // The provider's words (titles, snippets) go inside one fence with a fresh id; the JSON around
  // it carries only what the gateway checked (canonical URLs, ISO dates) and one-line labels.
  const listing = results
    .map((row, i) =>
      [
        `${i + 1}. ${row.title}`,
        `   ${row.url}`,
        ...(row.snippet ? [`   ${row.snippet.replace(/\s+/g, " ")}`] : []),
      ].join("\n"),
    )
    .join("\n");
  const text = fenceBlock(
    sanitizeUntrusted(listing || "(no results)"),
    `External (web_search ${provider.id})`,
    newFenceId(),
  );
  return {
    content: JSON.stringify(
      {
        kind: "results",
        provider: provider.id,
        query: query.query,
        count: results.length,
        tookMs: Date.now() - started,
        results: results.map(({ snippet: _snippet, ...row }) => row),
        externalContent: {
          untrusted: true,
          source: "web_search",
          wrapped: true,
          provider: provider.id,
        },
        ...(cached ? { cached: true } : {}),
        text,
      },
      null,
      2,
    ),
  };
}
