/**
 * Who is calling, for failed-auth counting: the address Cloudflare puts in CF-Connecting-IP (it
 * replaces any value the client sent). IPv4 addresses count one by one; IPv6 ones by their /64,
 * because a single subscriber is usually given a whole /64 and could otherwise rotate through it.
 */
export function clientAddress(request: Request): string {
  return request.headers.get("cf-connecting-ip")?.trim() || "unknown";
}

export function isLoopback(address: string): boolean {
  const lower = address.toLowerCase();
  return lower === "::1" || lower.startsWith("127.") || lower.startsWith("::ffff:127.");
}

/** The bucket one failed-auth counter covers: the IPv4 address, or the IPv6 /64 prefix. */
export function addressBucket(address: string): string {
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  if (mapped) return mapped[1]!;
  if (!lower.includes(":")) return lower;
  const hextets = expandIpv6(lower);
  return hextets ? `${hextets.slice(0, 4).join(":")}::/64` : lower;
}

/** The eight hextets of an IPv6 address (zone and an embedded IPv4 tail tolerated), or undefined. */
function expandIpv6(address: string): string[] | undefined {
  const bare = address.split("%")[0]!;
  // An embedded IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) stands for the last two hextets.
  const v4 = /(^|:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(bare);
  const text = v4 ? `${bare.slice(0, bare.length - v4[2]!.length)}0:0` : bare;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parts = (half: string | undefined) => (half ? half.split(":") : []);
  const head = parts(halves[0]);
  const tail = parts(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const hextets = [...head, ...Array<string>(missing).fill("0"), ...tail];
  if (!hextets.every((part) => /^[0-9a-f]{1,4}$/.test(part))) return undefined;
  return hextets.map((part) => part.replace(/^0+(?=.)/, ""));
}
