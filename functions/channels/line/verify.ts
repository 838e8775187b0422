/**
 * LINE webhook signatures (https://developers.line.biz/en/docs/messaging-api/verify-webhook-signature/):
 * `X-Line-Signature` is the base64 HMAC-SHA256 of the raw request body, keyed with the channel
 * secret. There is no timestamp, so a signature is the only trust signal (LINE publishes no source
 * IPs); replays are harmless because every event is deduplicated by its webhookEventId.
 */

export type LineVerifyResult =
  | { ok: true }
  | { ok: false; reason: "no-secret" | "missing-signature" | "bad-signature" };

const encoder = new TextEncoder();

export async function verifyLineSignature(
  rawBody: Uint8Array,
  signature: string | null,
  channelSecret: string | undefined,
): Promise<LineVerifyResult> {
  // Fail closed: an account without a channel secret accepts nothing.
  if (!channelSecret) return { ok: false, reason: "no-secret" };
  if (!signature) return { ok: false, reason: "missing-signature" };
  const given = decodeBase64(signature.trim());
  if (!given) return { ok: false, reason: "bad-signature" };
  const expected = await hmacSha256(channelSecret, rawBody);
  // The length of a well-formed signature (32 bytes) is public; timingSafeEqual needs equal lengths.
  if (given.byteLength !== expected.byteLength) return { ok: false, reason: "bad-signature" };
  return constantTimeEqual(expected, given) ? { ok: true } : { ok: false, reason: "bad-signature" };
}

/** The `X-Line-Signature` LINE would send for this body (verify, tests, the bench and `simulate`). */
export async function signLineBody(
  channelSecret: string,
  rawBody: Uint8Array | string,
): Promise<string> {
  const mac = await hmacSha256(
    channelSecret,
    typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody,
  );
  let binary = "";
  for (const byte of mac) binary += String.fromCharCode(byte);
  return btoa(binary);
}

async function hmacSha256(secret: string, data: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, data as Uint8Array<ArrayBuffer>));
}

function decodeBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length > 128) return undefined;
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** workerd's `crypto.subtle.timingSafeEqual`, with a constant-time fallback for Node-side scripts. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  const subtle = crypto.subtle as SubtleCrypto & {
    timingSafeEqual?(a: ArrayBufferView, b: ArrayBufferView): boolean;
  };
  if (typeof subtle.timingSafeEqual === "function") return subtle.timingSafeEqual(a, b);
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
