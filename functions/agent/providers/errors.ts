import { ModelError, type ModelErrorKind } from "../types.ts";

/**
 * Turns a provider's failure (HTTP status, error body, stream error event) into a ModelError whose
 * kind drives retry and failover. The buckets follow concepts/model-failover: billing text stays
 * billing whatever the status, spend-cap/usage-window texts are rate limits, context-length texts
 * are context_overflow (handled by compaction, never failed over).
 */

const CONTEXT_OVERFLOW =
  /context[_ ]length[_ ]exceeded|prompt is too long|request_too_large|input token count exceeds|input token count \(\d+\) exceeds|input exceeds the maximum number of tokens|input too long for the model|maximum context length|context window|context length exceeded/i;
const BILLING =
  /insufficient_quota|billing|credit balance|insufficient (credits|balance|funds)|payment required|out of credits|exceeded your current quota/i;
const RATE_LIMIT =
  /rate[_ ]limit|too many (concurrent )?requests|throttl|concurrency limit|quota limit exceeded|resource[_ ]exhausted|(weekly|daily|monthly|usage) limit|spending limit|limit (reached|exhausted)/i;
const OVERLOADED = /overloaded|ModelNotReadyException|capacity|temporarily unavailable/i;
/** Google answers a bad key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID. */
const INVALID_KEY = /API_KEY_INVALID|API key not valid|API key expired/i;

/**
 * The provider's own error type/code, when its body has one (Anthropic `error.type`, OpenAI
 * `error.code`/`type`, Google `error.status`).
 */
export interface ProviderErrorDetail {
  type?: string;
  code?: string;
  message: string;
  /** Google's `google.rpc.RetryInfo.retryDelay` in the error's details ("37s"). */
  retryAfterMs?: number;
}

export function classifyHttpError(
  status: number,
  detail: ProviderErrorDetail,
  retryAfterMs?: number,
): ModelError {
  const text = `${detail.type ?? ""} ${detail.code ?? ""} ${detail.message}`;
  const message = `HTTP ${status}${detail.type ? ` ${detail.type}` : ""}: ${detail.message}`;
  const wait = retryAfterMs ?? detail.retryAfterMs;
  return new ModelError(kindForStatus(status, text, detail), message, status, wait);
}

function kindForStatus(status: number, text: string, detail: ProviderErrorDetail): ModelErrorKind {
  if (status === 529 || detail.type === "overloaded_error") return "overloaded";
  // Google words a per-minute quota as "exceeded your current quota" too, but says when to retry.
  if (status === 429)
    return BILLING.test(text) && detail.retryAfterMs === undefined ? "billing" : "rate_limit";
  if (status === 400 && INVALID_KEY.test(text)) return "auth";
  if (status === 413) return "context_overflow";
  if (status < 500 && CONTEXT_OVERFLOW.test(text)) return "context_overflow";
  if (status === 402)
    return RATE_LIMIT.test(text) && !BILLING.test(text) ? "rate_limit" : "billing";
  // Anthropic reports a low credit balance as a 400; billing text stays billing whatever the status.
  if (status < 500 && BILLING.test(text)) return "billing";
  if (status === 401 || status === 403) return "auth";
  if (status === 408) return "timeout";
  if (status >= 500) return OVERLOADED.test(text) ? "overloaded" : "server";
  if (status === 409) return "server";
  if (RATE_LIMIT.test(text)) return "rate_limit";
  return "bad_request";
}

/** An error reported inside a 200 stream (Anthropic `event: error`, OpenAI `data: {"error": …}`). */
export function classifyStreamError(detail: ProviderErrorDetail): ModelError {
  const byType: Record<string, ModelErrorKind> = {
    overloaded_error: "overloaded",
    rate_limit_error: "rate_limit",
    api_error: "server",
    server_error: "server",
    timeout_error: "timeout",
    authentication_error: "auth",
    permission_error: "auth",
    billing_error: "billing",
    request_too_large: "context_overflow",
    not_found_error: "bad_request",
    invalid_request_error: "bad_request",
  };
  const text = `${detail.type ?? ""} ${detail.code ?? ""} ${detail.message}`;
  let kind: ModelErrorKind = (detail.type && byType[detail.type]) || "server";
  if (CONTEXT_OVERFLOW.test(text)) kind = "context_overflow";
  else if (BILLING.test(text)) kind = "billing";
  else if (kind === "server" && RATE_LIMIT.test(text)) kind = "rate_limit";
  else if (kind === "server" && OVERLOADED.test(text)) kind = "overloaded";
  return new ModelError(
    kind,
    `stream error${detail.type ? ` ${detail.type}` : ""}: ${detail.message}`,
  );
}

/**
 * Reads `{ error: { type, code, message } }` (Anthropic, OpenAI) or `{ error: { code, message,
 * status, details } }` (Google), else falls back to the raw text.
 */
export function parseErrorBody(raw: string): ProviderErrorDetail {
  try {
    const body: unknown = JSON.parse(raw);
    if (isRecord(body)) {
      const error = isRecord(body.error) ? body.error : body;
      const message = typeof error.message === "string" ? error.message : raw.slice(0, 500);
      return {
        message,
        type:
          typeof error.type === "string"
            ? error.type
            : typeof error.status === "string"
              ? error.status
              : undefined,
        code:
          typeof error.code === "string"
            ? error.code
            : typeof error.code === "number"
              ? String(error.code)
              : undefined,
        ...retryInfoOf(error.details),
      };
    }
  } catch {
    // not JSON: a proxy's HTML page or plain text
  }
  return { message: raw.slice(0, 500) || "(empty body)" };
}

function retryInfoOf(details: unknown): { retryAfterMs?: number } {
  if (!Array.isArray(details)) return {};
  for (const item of details) {
    if (!isRecord(item) || !String(item["@type"] ?? "").endsWith("google.rpc.RetryInfo")) continue;
    const delay = /^(\d+(?:\.\d+)?)s$/.exec(String(item.retryDelay ?? ""));
    if (delay) return { retryAfterMs: Math.round(Number(delay[1]) * 1000) };
  }
  return {};
}

/** `retry-after-ms` (Stainless SDKs) wins over `retry-after` (seconds or an HTTP date). */
export function retryAfterMsFromHeaders(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms)))
    return Math.max(0, Number(ms));
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Provider messages sometimes echo a masked key ("Incorrect API key provided: sk-ab***yz"). */
export function redactSecrets(text: string, secrets: Array<string | undefined> = []): string {
  let out = text;
  for (const secret of secrets)
    if (secret && secret.length >= 6) out = out.split(secret).join("[redacted]");
  return out.replace(/\b(sk-[A-Za-z0-9_\-*.]{4,}|sk-ant-[A-Za-z0-9_\-*.]{4,})/g, "[redacted]");
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
