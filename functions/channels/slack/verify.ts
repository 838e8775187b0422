/**
 * Slack request signing, v0 scheme (https://api.slack.com/authentication/verifying-requests-from-slack):
 * `X-Slack-Signature: v0=<hex HMAC-SHA256(signingSecret, "v0:" + timestamp + ":" + rawBody)>`, with
 * `X-Slack-Request-Timestamp` no more than five minutes from now. Always computed over the raw bytes
 * as received; a re-serialised body would not verify.
 */

export const SLACK_SIGNATURE_WINDOW_SECONDS = 300;

export type SlackVerifyResult =
  | { ok: true }
  | { ok: false; reason: "missing-headers" | "stale-timestamp" | "bad-signature" | "no-secret" };

const encoder = new TextEncoder();

export async function verifySlackSignature(
  rawBody: Uint8Array,
  headers: Headers,
  signingSecret: string | undefined,
  nowMs: number = Date.now(),
): Promise<SlackVerifyResult> {
  // Fail closed: an account without a signing secret accepts nothing.
  if (!signingSecret) return { ok: false, reason: "no-secret" };
  const timestamp = headers.get("x-slack-request-timestamp");
  const signature = headers.get("x-slack-signature");
  if (!timestamp || !signature) return { ok: false, reason: "missing-headers" };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: "stale-timestamp" };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_SIGNATURE_WINDOW_SECONDS) {
    return { ok: false, reason: "stale-timestamp" };
  }
  const expected = encoder.encode(await signSlackRequest(signingSecret, timestamp, rawBody));
  const given = encoder.encode(signature);
  // timingSafeEqual throws on unequal lengths; the length of a well-formed signature is public anyway.
  if (expected.byteLength !== given.byteLength) return { ok: false, reason: "bad-signature" };
  return constantTimeEqual(expected, given) ? { ok: true } : { ok: false, reason: "bad-signature" };
}

/** The `X-Slack-Signature` value Slack would send for this body (used by verify, tests and the bench). */
export async function signSlackRequest(
  signingSecret: string,
  timestamp: string,
  rawBody: Uint8Array | string,
): Promise<string> {
  const body = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody;
  const prefix = encoder.encode(`v0:${timestamp}:`);
  const base = new Uint8Array(prefix.byteLength + body.byteLength);
  base.set(prefix, 0);
  base.set(body, prefix.byteLength);
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(signingSecret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, base));
  let hex = "";
  for (const byte of mac) hex += byte.toString(16).padStart(2, "0");
  return `v0=${hex}`;
}

/** workerd's `crypto.subtle.timingSafeEqual`; Node (the simulator, scripts) has none, so a constant-time loop there. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  const subtle = crypto.subtle as SubtleCrypto & {
    timingSafeEqual?(a: ArrayBufferView, b: ArrayBufferView): boolean;
  };
  if (typeof subtle.timingSafeEqual === "function") return subtle.timingSafeEqual(a, b);
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
