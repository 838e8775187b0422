import type { VerifyResult } from "../channel.ts";

/**
 * Discord interaction requests are signed with the application's Ed25519 key
 * (https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers):
 * `X-Signature-Ed25519` = hex signature of `X-Signature-Timestamp` + raw body. WebCrypto Ed25519 (workerd,
 * Node ≥ 20). A timestamp older or newer than five minutes is refused too, so a captured request
 * cannot be replayed later. Discord probes the endpoint with bad signatures and expects 401.
 */

export const INTERACTION_MAX_SKEW_SECONDS = 300;

const keyCache = new Map<string, Promise<CryptoKey>>();

export async function verifyDiscordSignature(
  headers: Headers,
  raw: Uint8Array,
  publicKeyHex: string | undefined,
  nowSeconds: number,
): Promise<VerifyResult> {
  if (!publicKeyHex) return { ok: false, reason: "no-secret" };
  const signature = headers.get("x-signature-ed25519");
  const timestamp = headers.get("x-signature-timestamp");
  if (!signature || !timestamp)
    return { ok: false, status: 401, reason: "missing signature headers" };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, status: 401, reason: "bad timestamp" };
  if (Math.abs(nowSeconds - Number(timestamp)) > INTERACTION_MAX_SKEW_SECONDS)
    return { ok: false, status: 401, reason: "stale timestamp" };
  const signatureBytes = fromHex(signature);
  if (signatureBytes?.length !== 64)
    return { ok: false, status: 401, reason: "malformed signature" };
  let key = keyCache.get(publicKeyHex);
  if (!key) {
    const keyBytes = fromHex(publicKeyHex);
    if (keyBytes?.length !== 32)
      return { ok: false, status: 401, reason: "publicKey is not a 32-byte hex key" };
    key = crypto.subtle.importKey("raw", keyBytes, { name: "Ed25519" }, false, ["verify"]);
    keyCache.set(publicKeyHex, key);
    key.catch(() => keyCache.delete(publicKeyHex));
  }
  const stamp = new TextEncoder().encode(timestamp);
  const signed = new Uint8Array(stamp.length + raw.length);
  signed.set(stamp, 0);
  signed.set(raw, stamp.length);
  const valid = await crypto.subtle
    .verify({ name: "Ed25519" }, await key, signatureBytes, signed)
    .catch(() => false);
  return valid ? { ok: true } : { ok: false, status: 401, reason: "bad signature" };
}

function fromHex(hex: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) return undefined;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
