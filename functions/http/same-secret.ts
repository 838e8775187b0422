/**
 * Whether a presented secret equals the expected one, in time independent of where they differ and
 * of their lengths (their SHA-256 digests are compared). workerd has `crypto.subtle.timingSafeEqual`;
 * Node (scripts, benches) has none, so a plain XOR fold stands in.
 */
export async function sameSecret(given: string, expected: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [a, b] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(given)),
    crypto.subtle.digest("SHA-256", encoder.encode(expected)),
  ]);
  const subtle = crypto.subtle as SubtleCrypto & {
    timingSafeEqual?(a: ArrayBuffer, b: ArrayBuffer): boolean;
  };
  if (subtle.timingSafeEqual) return subtle.timingSafeEqual(a, b);
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}
