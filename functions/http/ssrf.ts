import { resolveHostAddresses } from "./doh.ts";

/**
 * Which URLs an outbound request may reach. `web_fetch` takes URLs from the model, and the model
 * takes them from untrusted pages and messages, so every hop (the first URL and each redirect) is
 * checked here before it is requested. Channels whose server is configurable (Mattermost's
 * `baseUrl`) use the same rules, so a reply or a repair call cannot be aimed at an internal service;
 * the companion (Node, which can resolve) checks each resolved address with `blockedAddressReason`.
 *
 * Two layers. `checkFetchUrl` judges the host as written: IP literals in every spelling the URL
 * parser accepts (decimal, hex, octal, short IPv4 forms; IPv6 with embedded IPv4), names that are
 * internal by definition (`localhost`, `*.internal`, metadata hosts, single-label intranet names)
 * and wildcard-DNS names that echo an IP (`127.0.0.1.nip.io`). `checkFetchTarget` then resolves a
 * name (DNS over HTTPS, `tools.web.fetch.dnsResolverUrl`) and refuses it when any A/AAAA answer is
 * loopback, private, link-local, unique-local, CGNAT, metadata or otherwise reserved; a name that
 * cannot be resolved is refused too (fail closed).
 *
 * What remains: a Worker cannot pin the address `fetch` connects to, so a name whose DNS answer
 * changes between this lookup and the connect (a rebinding attack with a zero TTL) is not caught.
 * What limits that in production is where the request leaves from: a deployed Worker's
 * subrequests go out from Cloudflare's edge, outside the operator's private networks and with no
 * cloud instance-metadata service. Run the same code inside a VPC and put an egress proxy that
 * enforces policy after resolution in front of it; keep `ssrfPolicy.dangerouslyAllowPrivateNetwork`
 * off.
 */

export interface SsrfPolicy {
  /** Exact host names (or IP literals) allowed even though they are private/internal. */
  allowedHostnames: readonly string[];
  /** Broadly allow private/internal targets (tests on loopback, trusted intranets). */
  dangerouslyAllowPrivateNetwork: boolean;
  /** Allow 198.18.0.0/15 (fake-IP proxies use it). */
  allowRfc2544BenchmarkRange: boolean;
  /** Allow fc00::/7 (fake-IP proxies use it). */
  allowIpv6UniqueLocalRange: boolean;
}

export const STRICT_SSRF_POLICY: SsrfPolicy = {
  allowedHostnames: [],
  dangerouslyAllowPrivateNetwork: false,
  allowRfc2544BenchmarkRange: false,
  allowIpv6UniqueLocalRange: false,
};

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** Decides whether `rawUrl` may be fetched under `policy`; the reason is safe to show the model. */
export function checkFetchUrl(
  rawUrl: string | URL,
  policy: SsrfPolicy = STRICT_SSRF_POLICY,
): UrlCheck {
  let url: URL;
  try {
    url = rawUrl instanceof URL ? rawUrl : new URL(rawUrl);
  } catch {
    return { ok: false, reason: "not a valid absolute URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return {
      ok: false,
      reason: `only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, "")}`,
    };
  }
  if (url.username || url.password) {
    return { ok: false, reason: "URLs with embedded credentials are not fetched" };
  }
  const host = canonicalHost(url.hostname);
  if (host === "") return { ok: false, reason: "URL has no host" };
  if (policy.allowedHostnames.some((allowed) => canonicalHost(allowed) === host))
    return { ok: true, url };

  const blocked = blockedHostReason(host, policy);
  if (blocked && !policy.dangerouslyAllowPrivateNetwork) {
    return {
      ok: false,
      reason: `${url.hostname} is ${blocked}; private, internal and metadata addresses are blocked`,
    };
  }
  return { ok: true, url };
}

/**
 * `checkFetchUrl`, and for a host name also where it points: every address it resolves to must pass
 * the same address rules. Hosts named in `allowedHostnames` (and every host under
 * `dangerouslyAllowPrivateNetwork`) are not looked up: they are allowed whatever they resolve to.
 */
export async function checkFetchTarget(
  rawUrl: string | URL,
  policy: SsrfPolicy,
  dns: { resolverUrl: string; signal?: AbortSignal },
): Promise<UrlCheck> {
  const checked = checkFetchUrl(rawUrl, policy);
  if (!checked.ok || policy.dangerouslyAllowPrivateNetwork) return checked;
  const host = canonicalHost(checked.url.hostname);
  if (policy.allowedHostnames.some((allowed) => canonicalHost(allowed) === host)) return checked;
  // An IP literal was judged as written; only names have something to resolve.
  if (host.includes(":") || parseIpv4(host) !== undefined) return checked;
  const resolved = await resolveHostAddresses(host, dns.resolverUrl, dns.signal);
  if (!resolved.ok)
    return {
      ok: false,
      reason: `${checked.url.hostname} ${resolved.reason}; a name that cannot be resolved is not fetched`,
    };
  for (const address of resolved.addresses) {
    const blocked = blockedAddressReason(address, policy);
    if (blocked)
      return {
        ok: false,
        reason: `${checked.url.hostname} resolves to ${address}, ${blocked}; private, internal and metadata addresses are blocked`,
      };
  }
  return checked;
}

/** Why one address from a DNS answer (dotted IPv4 or IPv6 text) is refused, or undefined when it is public. Anything else is refused. */
export function blockedAddressReason(address: string, policy: SsrfPolicy): string | undefined {
  if (address.includes(":")) {
    const v6 = parseIpv6(address);
    return v6 ? blockedIpv6Reason(v6, policy) : "not a valid address";
  }
  const v4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(address) ? parseIpv4(address) : undefined;
  return v4 === undefined ? "not a valid address" : blockedIpv4Reason(v4, policy);
}

/** Lower case, without IPv6 brackets or trailing dots (`LOCALHOST.` and `localhost` are one host). */
function canonicalHost(hostname: string): string {
  let host = hostname.trim().toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return host.replace(/\.+$/, "");
}

const METADATA_HOSTS = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
]);
const INTERNAL_SUFFIXES = [
  ".localhost",
  ".local",
  ".internal",
  ".localdomain",
  ".home.arpa",
  ".intranet",
  ".lan",
  ".corp",
];
/** Public wildcard-DNS services whose names resolve to the IP written inside them. */
const IP_ECHO_SUFFIXES = [".nip.io", ".sslip.io", ".xip.io", ".traefik.me"];
/** Public names that always resolve to loopback. */
const LOOPBACK_NAMES = ["localtest.me", "lvh.me", "vcap.me", "lacolhost.com"];

function blockedHostReason(host: string, policy: SsrfPolicy): string | undefined {
  if (host.includes(":")) {
    const v6 = parseIpv6(host);
    return v6 ? blockedIpv6Reason(v6, policy) : "not a valid IPv6 address";
  }
  const v4 = parseIpv4(host);
  if (v4 !== undefined) return blockedIpv4Reason(v4, policy);

  if (host === "localhost" || host === "localhost.localdomain") return "a loopback name";
  if (METADATA_HOSTS.has(host)) return "a cloud metadata endpoint";
  if (INTERNAL_SUFFIXES.some((suffix) => host.endsWith(suffix))) return "an internal name";
  if (!host.includes(".")) return "a single-label (intranet) name";
  if (LOOPBACK_NAMES.some((name) => host === name || host.endsWith(`.${name}`)))
    return "a name that resolves to loopback";
  const echo = IP_ECHO_SUFFIXES.find((suffix) => host.endsWith(suffix));
  if (echo) {
    const embedded = embeddedIpv4(host.slice(0, -echo.length));
    if (embedded !== undefined) {
      const reason = blockedIpv4Reason(embedded, policy);
      if (reason) return `a wildcard-DNS name for ${reason}`;
    }
  }
  return undefined;
}

/** `app.10.0.0.1` / `10-0-0-1` / `0a000001` inside a nip.io-style name. */
function embeddedIpv4(labels: string): number | undefined {
  const dotted = labels.match(/(?:^|[.-])(\d{1,3}(?:[.-]\d{1,3}){3})$/);
  if (dotted?.[1]) return parseIpv4(dotted[1].replace(/-/g, "."));
  const hex = labels.match(/(?:^|[.-])([0-9a-f]{8})$/);
  if (hex?.[1]) return Number.parseInt(hex[1], 16);
  return undefined;
}

/**
 * IPv4 as the WHATWG URL parser reads a host: 1–4 dot-separated parts, each decimal, `0x` hex or
 * leading-zero octal, the last part filling the remaining bytes (`127.1`, `0x7f.0.0.1`, `2130706433`,
 * `0177.0.0.1`). Returns the address as an unsigned 32-bit number, or undefined for a name.
 */
export function parseIpv4(host: string): number | undefined {
  const parts = host.split(".");
  if (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  if (parts.length === 0 || parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part))
      value = part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) value = Number.parseInt(part.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) value = Number.parseInt(part, 10);
    else return undefined;
    if (!Number.isFinite(value)) return undefined;
    numbers.push(value);
  }
  const last = numbers.pop() as number;
  if (numbers.some((n) => n > 255)) return undefined;
  if (last >= 256 ** (4 - numbers.length)) return undefined;
  let address = last;
  numbers.forEach((n, i) => {
    address += n * 256 ** (3 - i);
  });
  return address >>> 0;
}

function inV4(address: number, base: string, bits: number): boolean {
  const start = parseIpv4(base) as number;
  const size = 2 ** (32 - bits);
  return address >= start && address < start + size;
}

function blockedIpv4Reason(address: number, policy: SsrfPolicy): string | undefined {
  if (address === parseIpv4("169.254.169.254") || address === parseIpv4("100.100.100.200")) {
    return "a cloud metadata endpoint";
  }
  if (inV4(address, "127.0.0.0", 8)) return "a loopback address";
  if (inV4(address, "0.0.0.0", 8)) return "an unspecified (this-network) address";
  if (
    inV4(address, "10.0.0.0", 8) ||
    inV4(address, "172.16.0.0", 12) ||
    inV4(address, "192.168.0.0", 16)
  ) {
    return "a private (RFC 1918) address";
  }
  if (inV4(address, "100.64.0.0", 10)) return "a carrier-grade NAT (RFC 6598) address";
  if (inV4(address, "169.254.0.0", 16)) return "a link-local address";
  if (inV4(address, "198.18.0.0", 15))
    return policy.allowRfc2544BenchmarkRange ? undefined : "a benchmarking (RFC 2544) address";
  if (inV4(address, "192.0.0.0", 24)) return "an IETF protocol-assignment address";
  if (
    inV4(address, "192.0.2.0", 24) ||
    inV4(address, "198.51.100.0", 24) ||
    inV4(address, "203.0.113.0", 24)
  ) {
    return "a documentation (TEST-NET) address";
  }
  if (inV4(address, "224.0.0.0", 4)) return "a multicast address";
  if (inV4(address, "240.0.0.0", 4)) return "a reserved address";
  return undefined;
}

/** Parses an IPv6 literal (with optional embedded IPv4 tail and zone id) into 8 16-bit groups. */
export function parseIpv6(input: string): number[] | undefined {
  let host = input.toLowerCase();
  const zone = host.indexOf("%");
  if (zone !== -1) host = host.slice(0, zone);
  const lastColon = host.lastIndexOf(":");
  const maybeV4 = host.slice(lastColon + 1);
  if (maybeV4.includes(".")) {
    // Rewrite a dotted IPv4 tail as its two hex groups, then parse as plain IPv6.
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(maybeV4)) return undefined;
    const octets = maybeV4.split(".").map(Number);
    if (octets.some((o) => o > 255)) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = octets;
    host = `${host.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = host.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string | undefined): number[] | undefined => {
    if (!part) return [];
    const groups: number[] = [];
    for (const group of part.split(":")) {
      if (!/^[0-9a-f]{1,4}$/.test(group)) return undefined;
      groups.push(Number.parseInt(group, 16));
    }
    return groups;
  };
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  if (!head || !rest) return undefined;
  const total = head.length + rest.length;
  if (halves.length === 1 && total !== 8) return undefined;
  if (halves.length === 2 && total > 7) return undefined;
  const zeros = new Array<number>(8 - total).fill(0);
  return [...head, ...zeros, ...rest];
}

function v4From(groups: number[], hi: number, lo: number): number {
  return (((groups[hi] ?? 0) << 16) | (groups[lo] ?? 0)) >>> 0;
}

function blockedIpv6Reason(g: number[], policy: SsrfPolicy): string | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const allZeroPrefix = (n: number) => g.slice(0, n).every((x) => x === 0);

  if (
    g0 === 0xfd00 &&
    g1 === 0x0ec2 &&
    g2 === 0 &&
    g3 === 0 &&
    g4 === 0 &&
    g5 === 0 &&
    g6 === 0 &&
    g7 === 0x254
  ) {
    return "a cloud metadata endpoint";
  }
  if (allZeroPrefix(7) && g7 === 1) return "a loopback address";
  if (allZeroPrefix(8)) return "an unspecified address";
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d) and IPv4-compatible (::a.b.c.d):
  // judge the IPv4 address they carry.
  if (allZeroPrefix(5) && g5 === 0xffff) return viaV4(v4From(g, 6, 7), "IPv4-mapped", policy);
  if (allZeroPrefix(4) && g4 === 0xffff && g5 === 0)
    return viaV4(v4From(g, 6, 7), "IPv4-translated", policy);
  if (allZeroPrefix(6)) return viaV4(v4From(g, 6, 7), "IPv4-compatible", policy);
  // NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and 6to4 (2002::/16) also carry an IPv4 destination.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return viaV4(v4From(g, 6, 7), "NAT64", policy);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "a local-use NAT64 address";
  if (g0 === 0x2002) return viaV4(v4From(g, 1, 2), "6to4", policy);
  if ((g0 & 0xffc0) === 0xfe80) return "a link-local address";
  if ((g0 & 0xffc0) === 0xfec0) return "a site-local address";
  if ((g0 & 0xfe00) === 0xfc00)
    return policy.allowIpv6UniqueLocalRange ? undefined : "a unique-local (fc00::/7) address";
  if ((g0 & 0xff00) === 0xff00) return "a multicast address";
  if (g0 === 0x2001 && g1 === 0x0db8) return "a documentation address";
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return "a discard-only address";
  return undefined;
}

function viaV4(address: number, form: string, policy: SsrfPolicy): string | undefined {
  const reason = blockedIpv4Reason(address, policy);
  return reason ? `an ${form} IPv6 form of ${reason}` : undefined;
}
