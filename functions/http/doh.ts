import * as z from "zod";

/**
 * DNS over HTTPS, JSON flavour (`application/dns-json`, as served by Cloudflare's 1.1.1.1 and
 * Google): `GET <resolver>?name=<host>&type=A|AAAA` → `{ Status, Answer: [{ type, data }] }`.
 * A Worker has no resolver of its own before `fetch`, so this is how `web_fetch` learns where a
 * name points before it connects. The resolver is `tools.web.fetch.dnsResolverUrl` (default
 * Cloudflare's, https://cloudflare-dns.com/dns-query).
 */

const DNS_TIMEOUT_MS = 5_000;
const TYPE_A = 1;
const TYPE_AAAA = 28;

const dohAnswerSchema = z
  .object({
    Status: z.number().int(),
    Answer: z
      .array(z.object({ type: z.number().int(), data: z.string() }).loose())
      .max(200)
      .optional(),
  })
  .loose();

export type Resolution = { ok: true; addresses: string[] } | { ok: false; reason: string };

/** Every A and AAAA address `name` resolves to (CNAME chains are followed by the resolver). */
export async function resolveHostAddresses(
  name: string,
  resolverUrl: string,
  signal?: AbortSignal,
): Promise<Resolution> {
  const timeout = AbortSignal.timeout(DNS_TIMEOUT_MS);
  const abort = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    const [a, aaaa] = await Promise.all([
      query(name, "A", resolverUrl, abort),
      query(name, "AAAA", resolverUrl, abort),
    ]);
    if (!a.ok) return a;
    if (!aaaa.ok) return aaaa;
    const addresses = [...a.addresses, ...aaaa.addresses];
    if (!addresses.length) return { ok: false, reason: "has no A or AAAA record" };
    return { ok: true, addresses };
  } catch (error) {
    if (timeout.aborted)
      return { ok: false, reason: `could not be resolved within ${DNS_TIMEOUT_MS / 1000} s` };
    return {
      ok: false,
      reason: `could not be resolved (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

async function query(
  name: string,
  type: "A" | "AAAA",
  resolverUrl: string,
  signal: AbortSignal,
): Promise<Resolution> {
  const url = new URL(resolverUrl);
  url.searchParams.set("name", name);
  url.searchParams.set("type", type);
  const response = await fetch(url, { headers: { accept: "application/dns-json" }, signal });
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return {
      ok: false,
      reason: `could not be resolved (resolver answered HTTP ${response.status})`,
    };
  }
  const parsed = dohAnswerSchema.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success)
    return { ok: false, reason: "could not be resolved (unreadable resolver answer)" };
  // 3 = NXDOMAIN; any other non-zero status (SERVFAIL, REFUSED, …) is a failure to resolve.
  if (parsed.data.Status === 3) return { ok: false, reason: "does not exist (NXDOMAIN)" };
  if (parsed.data.Status !== 0)
    return { ok: false, reason: `could not be resolved (DNS status ${parsed.data.Status})` };
  const wanted = type === "A" ? TYPE_A : TYPE_AAAA;
  return {
    ok: true,
    addresses: (parsed.data.Answer ?? [])
      .filter((record) => record.type === wanted)
      .map((record) => record.data.trim()),
  };
}
