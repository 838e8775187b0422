import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { AgentTool, ToolContext, ToolResult } from "../types.ts";
import { checkFetchTarget, type SsrfPolicy } from "../../http/ssrf.ts";
import { ToolInputError, parseToolArgs } from "./common.ts";
import { extractReadableHtml, type ExtractMode } from "./html-extract.ts";
import { fenceBlock, newFenceId, sanitizeUntrusted } from "../untrusted-text.ts";
import { cacheGet, cachePut, webFetchCacheKey } from "./web-fetch-cache.ts";

/**
 * `web_fetch` per tools/web-fetch: a plain GET (no JavaScript), readable text out of HTML, bounded
 * at every step (bytes read, chars returned, time, redirects). Every hop — the model's URL and each
 * redirect target — passes the SSRF check first, because a public page may redirect to an internal
 * address; redirects are therefore followed by hand, never by `fetch` itself. A host name is
 * resolved first (DNS over HTTPS) and refused when it points inward. Configured `headers` go only
 * to the hosts in `headersHosts`, hop by hop.
 */

const DEFAULT_USER_AGENT =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Header names that belong to the fetch protocol or to framing; configured values for them are dropped. */
const RESERVED_HEADERS = new Set([
  "accept",
  "accept-language",
  "user-agent",
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "upgrade",
  "keep-alive",
  "te",
  "trailer",
  "proxy-connection",
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/i;

const webFetchArgs = z.object({
  url: z.string().min(1),
  extractMode: z.enum(["markdown", "text"]).default("markdown"),
  maxChars: z.number().int().positive().optional(),
});

type FetchConfig = EdgeclawConfig["tools"]["web"]["fetch"];

export interface WebFetchResult {
  url: string;
  finalUrl: string;
  status: number;
  extractMode: ExtractMode;
  extractor: string;
  contentType?: string;
  title?: string;
  warning?: string;
  externalContent: { untrusted: true; source: "web_fetch"; wrapped: true };
  truncated: boolean;
  length: number;
  rawLength: number;
  fetchedAt: string;
  tookMs: number;
  text: string;
  cached?: true;
}

export function ssrfPolicyOf(fetchConfig: FetchConfig): SsrfPolicy {
  return {
    allowedHostnames: [
      ...fetchConfig.ssrfPolicy.allowedHostnames,
      ...fetchConfig.allowPrivateHosts,
    ],
    dangerouslyAllowPrivateNetwork: fetchConfig.ssrfPolicy.dangerouslyAllowPrivateNetwork,
    allowRfc2544BenchmarkRange: fetchConfig.ssrfPolicy.allowRfc2544BenchmarkRange,
    allowIpv6UniqueLocalRange: fetchConfig.ssrfPolicy.allowIpv6UniqueLocalRange,
  };
}

export function createWebFetchTool(config: EdgeclawConfig): AgentTool | null {
  const fetchConfig = config.tools.web.fetch;
  if (!fetchConfig.enabled) return null;
  const cap = fetchConfig.maxCharsCap;
  return {
    name: "web_fetch",
    description:
      "Fetch a web page (http or https) with a plain GET and return its readable content as markdown or text. Does not run JavaScript; private and internal addresses are refused.",
    parameters: {
      type: "object",
      properties: {
        url: { type: "string", description: "The http(s) URL to fetch" },
        extractMode: {
          type: "string",
          enum: ["markdown", "text"],
          description: "Output format (default markdown)",
        },
        maxChars: {
          type: "integer",
          minimum: 1,
          description: `Truncate the content to this many characters (at most ${cap})`,
        },
      },
      required: ["url"],
      additionalProperties: false,
    },
    execute: (rawArgs, ctx) =>
      runWebFetch(fetchConfig, parseToolArgs("web_fetch", webFetchArgs, rawArgs), ctx),
  };
}

async function runWebFetch(
  fetchConfig: FetchConfig,
  args: z.infer<typeof webFetchArgs>,
  ctx: ToolContext,
): Promise<ToolResult> {
  const started = Date.now();
  const maxChars = Math.min(args.maxChars ?? fetchConfig.maxChars, fetchConfig.maxCharsCap);
  const policy = ssrfPolicyOf(fetchConfig);
  // Refuse before the cache is consulted, so a policy change (or a name now pointing inward) takes effect at once.
  const checked = await checkFetchTarget(args.url, policy, {
    resolverUrl: fetchConfig.dnsResolverUrl,
    signal: ctx.signal,
  });
  if (!checked.ok) throw new ToolInputError(`web_fetch refused ${args.url}: ${checked.reason}`);

  const cacheKey =
    fetchConfig.cacheTtlMinutes > 0
      ? await webFetchCacheKey(fetchConfig, args.url, args.extractMode, maxChars)
      : undefined;
  const hit = cacheKey ? await cacheGet<WebFetchResult>(cacheKey) : undefined;
  if (hit)
    return {
      content: JSON.stringify({ ...hit, cached: true, tookMs: Date.now() - started }, null, 2),
    };

  const result = await fetchAndExtract(
    fetchConfig,
    args,
    checked.url,
    maxChars,
    policy,
    ctx,
    started,
  );
  if ("content" in result) return result;
  if (cacheKey) await cachePut(cacheKey, result, fetchConfig.cacheTtlMinutes);
  return { content: JSON.stringify(result, null, 2) };
}

async function fetchAndExtract(
  fetchConfig: FetchConfig,
  args: z.infer<typeof webFetchArgs>,
  firstUrl: URL,
  maxChars: number,
  policy: SsrfPolicy,
  ctx: ToolContext,
  started: number,
): Promise<WebFetchResult | ToolResult> {
  const timeout = AbortSignal.timeout(fetchConfig.timeoutSeconds * 1000);
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;

  let current = firstUrl;
  let response: Response | undefined;

  try {
    for (let hop = 0; ; hop++) {
      // Configured extra headers go only to the hosts they are configured for, on every hop.
      const headers = requestHeaders(fetchConfig, hostListed(current, fetchConfig.headersHosts));
      response = await fetch(current.toString(), {
        method: "GET",
        headers,
        redirect: "manual",
        signal,
      });
      if (!REDIRECT_STATUSES.has(response.status)) break;
      const location = response.headers.get("location");
      await response.body?.cancel();
      if (!location)
        throw new ToolInputError(
          `web_fetch: ${current} answered ${response.status} without a Location header`,
        );
      if (hop >= fetchConfig.maxRedirects) {
        throw new ToolInputError(
          `web_fetch: more than ${fetchConfig.maxRedirects} redirects (tools.web.fetch.maxRedirects), stopped at ${current}`,
        );
      }
      const next = await checkFetchTarget(new URL(location, current).toString(), policy, {
        resolverUrl: fetchConfig.dnsResolverUrl,
        signal,
      });
      if (!next.ok)
        throw new ToolInputError(
          `web_fetch refused the redirect from ${current} to ${location}: ${next.reason}`,
        );
      current = next.url;
    }
  } catch (error) {
    if (error instanceof ToolInputError) throw error;
    if (timeout.aborted)
      throw new ToolInputError(
        `web_fetch: ${current} did not answer within ${fetchConfig.timeoutSeconds} s`,
      );
    if (ctx.signal?.aborted) throw new ToolInputError("web_fetch: cancelled");
    throw new ToolInputError(
      `web_fetch: could not fetch ${current}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }

  const contentType = response.headers.get("content-type") ?? undefined;
  let body: { bytes: Uint8Array; truncated: boolean };
  try {
    body = await readBounded(response, fetchConfig.maxResponseBytes, signal);
  } catch (error) {
    if (timeout.aborted)
      throw new ToolInputError(
        `web_fetch: ${current} did not finish within ${fetchConfig.timeoutSeconds} s`,
      );
    if (ctx.signal?.aborted) throw new ToolInputError("web_fetch: cancelled");
    throw new ToolInputError(
      `web_fetch: reading ${current} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const decoded = decodeBody(body.bytes, contentType);
  const extracted = await extract(decoded, contentType, args.extractMode, fetchConfig.readability);
  const warnings: string[] = [];
  if (body.truncated)
    warnings.push(
      `response body cut at ${fetchConfig.maxResponseBytes} bytes (tools.web.fetch.maxResponseBytes)`,
    );
  if (extracted.warning) warnings.push(extracted.warning);

  const clean = sanitize(extracted.text);
  const truncated = clean.length > maxChars;
  const content = truncated ? clean.slice(0, maxChars) : clean;
  const wrapped = wrapExternal(content, current.toString());

  if (!response.ok) {
    return {
      content: `web_fetch: ${current} answered HTTP ${response.status}.\n${wrapExternal(clean.slice(0, 1000), current.toString())}`,
      isError: true,
    };
  }

  const result: WebFetchResult = {
    url: args.url,
    finalUrl: current.toString(),
    status: response.status,
    extractMode: args.extractMode,
    extractor: extracted.extractor,
    ...(contentType ? { contentType } : {}),
    ...(extracted.title ? { title: sanitize(extracted.title) } : {}),
    ...(warnings.length ? { warning: warnings.join("; ") } : {}),
    externalContent: { untrusted: true, source: "web_fetch", wrapped: true },
    truncated,
    length: wrapped.length,
    rawLength: clean.length,
    fetchedAt: new Date(started).toISOString(),
    tookMs: Date.now() - started,
    text: wrapped,
  };
  return result;
}

/** `host` (any port), `host:port`, or `*.domain` (subdomains only), case-insensitive. */
function hostListed(url: URL, hosts: readonly string[]): boolean {
  const hostname = url.hostname.toLowerCase().replace(/\.+$/, "");
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return hosts.some((entry) => {
    const pattern = entry.trim().toLowerCase();
    const withPort = /^(.*):(\d+)$/.exec(pattern);
    if (withPort && !pattern.startsWith("["))
      return withPort[1] === hostname && withPort[2] === port;
    if (pattern.startsWith("*.")) return hostname.endsWith(pattern.slice(1));
    return pattern.replace(/\.+$/, "") === hostname;
  });
}

function requestHeaders(fetchConfig: FetchConfig, includeConfigured: boolean): Headers {
  const headers = new Headers({
    "user-agent": fetchConfig.userAgent ?? DEFAULT_USER_AGENT,
    "accept-language": "en-US,en;q=0.9",
    accept:
      "text/html,application/xhtml+xml,text/plain,text/markdown,application/json;q=0.9,*/*;q=0.5",
  });
  if (!includeConfigured || !fetchConfig.headers) return headers;
  for (const [name, value] of Object.entries(fetchConfig.headers)) {
    // Invalid entries are dropped one by one (the docs' rule); values are never echoed anywhere.
    if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase())) continue;
    if (/[\r\n\0]|[^\u0000-\u00ff]/.test(value)) continue;
    headers.set(name, value);
  }
  return headers;
}

async function readBounded(
  response: Response,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  try {
    while (true) {
      if (signal.aborted)
        throw new ToolInputError("web_fetch: timed out while reading the response");
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - total;
      if (value.byteLength >= room) {
        chunks.push(value.subarray(0, room));
        total += room;
        truncated = value.byteLength > room;
        if (!truncated) continue;
        await reader.cancel();
        break;
      }
      chunks.push(value);
      total += value.byteLength;
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { bytes, truncated };
}

function decodeBody(bytes: Uint8Array, contentType: string | undefined): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType ?? "")?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

async function extract(
  body: string,
  contentType: string | undefined,
  mode: ExtractMode,
  readability: boolean,
): Promise<{ text: string; title?: string; extractor: string; warning?: string }> {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  const looksHtml =
    type === "text/html" ||
    type === "application/xhtml+xml" ||
    (type === "" && /^\s*<(!doctype html|html)/i.test(body));
  if (looksHtml) {
    const page = await extractReadableHtml(body, mode, readability);
    return { text: page.text, title: page.title, extractor: page.extractor };
  }
  if (type === "application/json" || type.endsWith("+json")) {
    try {
      return { text: JSON.stringify(JSON.parse(body), null, 2), extractor: "json" };
    } catch {
      return { text: body, extractor: "raw", warning: "declared JSON but did not parse" };
    }
  }
  if (
    type === "" ||
    type.startsWith("text/") ||
    type === "application/xml" ||
    type.endsWith("+xml")
  ) {
    return { text: body, extractor: "raw" };
  }
  throw new ToolInputError(`web_fetch: the response is ${type}, which has no readable text`);
}

const sanitize = sanitizeUntrusted;

/** Marks fetched (already sanitized) text as untrusted data, with an id the page cannot guess. */
function wrapExternal(text: string, source: string): string {
  return fenceBlock(text, `External (web_fetch ${source})`, newFenceId());
}
