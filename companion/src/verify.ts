import { timingSafeEqual } from "node:crypto";
import {
  HEADER_KEY_ID,
  HEADER_SIGNATURE,
  HEADER_TIMESTAMP,
  hmacHex,
  signatureBase,
  SIGNATURE_VERSION,
  SIGNATURE_WINDOW_SECONDS,
  type SigningKey,
} from "../../functions/channels/companion/signature.ts";

/** Node side of the shared signature (the Worker's verify.ts uses workerd's compare; this, node:crypto's). */
export async function verifySigned(
  keys: SigningKey[],
  headers: Record<string, string | string[] | undefined>,
  method: string,
  path: string,
  body: Uint8Array,
): Promise<{ ok: true; keyId: string } | { ok: false; reason: string }> {
  const header = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const keyId = header(HEADER_KEY_ID);
  const timestampText = header(HEADER_TIMESTAMP);
  const signature = header(HEADER_SIGNATURE);
  if (!keyId || !timestampText || !signature)
    return { ok: false, reason: "missing signature headers" };
  if (!/^\d{1,12}$/.test(timestampText)) return { ok: false, reason: "malformed timestamp" };
  const timestamp = Number(timestampText);
  if (Math.abs(Math.floor(Date.now() / 1000) - timestamp) > SIGNATURE_WINDOW_SECONDS)
    return { ok: false, reason: "stale timestamp" };
  const key = keys.find((candidate) => candidate.id === keyId);
  if (!key) return { ok: false, reason: "unknown key id" };
  const expected = Buffer.from(
    `${SIGNATURE_VERSION}=${await hmacHex(key.secret, await signatureBase({ method, path, body, timestamp, keyId }))}`,
  );
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? { ok: true, keyId }
    : { ok: false, reason: "bad signature" };
}
