import { ModelError } from "../types.ts";
import { redactSecrets } from "./errors.ts";

/**
 * Why a model provider could not be reached, in words that point at the fix: the host name does
 * not resolve (DNS), nothing listens on the port (refused), or the TLS handshake failed. Runtimes
 * say it differently: Node and undici name it (ENOTFOUND, ECONNREFUSED, certificate …); workerd's
 * fetch only throws "Network connection lost." (refused, reset) or "internal error; reference = …"
 * (DNS and TLS alike) and logs the real cause to its own stderr; Cloudflare's edge answers a
 * subrequest to a name that does not resolve with HTTP 530 "error code: 1016". For workerd's
 * opaque internal error one cheap probe tells DNS from TLS: a bare plain-HTTP HEAD to the same
 * host and port (no headers, no body, so no key leaves) fails the same way only when the name
 * does not resolve; any answer, or a dropped connection, means the host was found.
 */

export type UnreachableCause = "dns" | "refused" | "tls" | "timeout" | "network";

export interface UnreachableTarget {
  url: string;
  /** The config key that holds the base URL (`models.providers.<id>.baseUrl`). */
  baseUrlKey?: string;
  secrets: Array<string | undefined>;
}

const DNS_TEXT =
  /ENOTFOUND|EAI_AGAIN|EAI_NONAME|getaddrinfo|DNS lookup failed|Name or service not known|name resolution|could not resolve/i;
const REFUSED_TEXT = /ECONNREFUSED|connection refused|connect\(\): Connection refused/i;
const TLS_TEXT =
  /certificate|CERT_|TLS|SSL|handshake|self[- ]signed|UNABLE_TO_VERIFY|ERR_SSL|wrong version number/i;
const WORKERD_CONNECTION_LOST = /^Network connection lost\.?$/i;
const WORKERD_INTERNAL = /^internal error; reference = /i;
const PROBE_TIMEOUT_MS = 3_000;

/** The causes a thrown fetch error names itself (its message and its `cause` chain). */
export function causeFromText(error: unknown): UnreachableCause | undefined {
  const texts: string[] = [];
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    if (current instanceof Error) {
      texts.push(current.message, (current as { code?: unknown }).code?.toString() ?? "");
      current = (current as { cause?: unknown }).cause;
    } else {
      texts.push(String(current));
      break;
    }
  }
  const text = texts.join(" ");
  if (DNS_TEXT.test(text)) return "dns";
  if (REFUSED_TEXT.test(text)) return "refused";
  if (TLS_TEXT.test(text)) return "tls";
  if (/ETIMEDOUT|timed out/i.test(text)) return "timeout";
  return undefined;
}

/** Finds the cause of a transport failure of `fetch(target.url)`, probing once when it must. */
export async function diagnoseUnreachable(
  target: UnreachableTarget,
  error: unknown,
): Promise<UnreachableCause> {
  const named = causeFromText(error);
  if (named) return named;
  const message = error instanceof Error ? error.message : String(error);
  if (WORKERD_CONNECTION_LOST.test(message)) return "refused";
  if (WORKERD_INTERNAL.test(message)) return (await hostResolves(target.url)) ? "tls" : "dns";
  return "network";
}

/** The plain-HTTP probe described above: false only when it fails as the name lookup does. */
async function hostResolves(url: string): Promise<boolean> {
  const probe = new URL(url);
  const port = probe.port || (probe.protocol === "https:" ? "443" : "80");
  try {
    await fetch(`http://${probe.hostname}:${port}/`, {
      method: "HEAD",
      redirect: "manual",
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    return true;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return !(WORKERD_INTERNAL.test(message) || causeFromText(error) === "dns");
  }
}

/** The error a caller sees: which host, what went wrong there, and which key to check. */
export function unreachableError(
  target: UnreachableTarget,
  cause: UnreachableCause,
  error?: unknown,
): ModelError {
  const where = new URL(target.url);
  const host = where.hostname;
  const hostPort = where.port ? `${host}:${where.port}` : host;
  const what: Record<UnreachableCause, string> = {
    dns: `DNS lookup failed: the provider's host name ${host} does not resolve`,
    refused: `connection refused by ${hostPort} (nothing is listening there, or the connection was dropped before any answer)`,
    tls: `the TLS handshake with ${hostPort} failed (the server does not speak HTTPS on that port, or its certificate is not trusted)`,
    timeout: `the connection to ${hostPort} timed out`,
    network: `the connection to ${hostPort} failed (${redactSecrets(
      error instanceof Error ? error.message : String(error ?? "unknown error"),
      target.secrets,
    )})`,
  };
  const check = target.baseUrlKey ? `; check ${target.baseUrlKey} (${where.origin})` : "";
  return new ModelError("network", `could not reach the model provider: ${what[cause]}${check}`);
}

/** Cloudflare's edge answer for a subrequest to a name that does not resolve (error 1016). */
export function isEdgeDnsError(status: number, body: string): boolean {
  return status === 530 && /\b1016\b/.test(body);
}
