import {
  encoder,
  HEADER_KEY_ID,
  HEADER_SIGNATURE,
  HEADER_TIMESTAMP,
  hmacHex,
  signatureBase,
  SIGNATURE_VERSION,
  SIGNATURE_WINDOW_SECONDS,
  type SigningKey,
} from "./signature.ts";

/** Worker side of the companion signature (signature.ts): uses workerd's constant-time compare. */
export type VerifyOutcome = { ok: true; keyId: string } | { ok: false; reason: string };

/** Checks a request's signature headers against the live keys; constant-time comparison. */
export async function verifySignedRequest(args: {
  keys: SigningKey[];
  headers: Headers;
  method: string;
  path: string;
  body: Uint8Array;
  nowSeconds: number;
}): Promise<VerifyOutcome> {
  const keyId = args.headers.get(HEADER_KEY_ID);
  const timestampText = args.headers.get(HEADER_TIMESTAMP);
  const signature = args.headers.get(HEADER_SIGNATURE);
  if (!keyId || !timestampText || !signature)
    return { ok: false, reason: "missing signature headers" };
  if (!/^\d{1,12}$/.test(timestampText)) return { ok: false, reason: "malformed timestamp" };
  const timestamp = Number(timestampText);
  if (Math.abs(args.nowSeconds - timestamp) > SIGNATURE_WINDOW_SECONDS)
    return { ok: false, reason: "stale timestamp" };
  const key = args.keys.find((candidate) => candidate.id === keyId);
  if (!key) return { ok: false, reason: "unknown key id" };
  const expected = `${SIGNATURE_VERSION}=${await hmacHex(key.secret, await signatureBase({ method: args.method, path: args.path, body: args.body, timestamp, keyId }))}`;
  const given = encoder.encode(signature);
  const wanted = encoder.encode(expected);
  // Lengths of well-formed signatures are public; compare the bytes in constant time (workerd API).
  const equal =
    given.byteLength === wanted.byteLength && crypto.subtle.timingSafeEqual(given, wanted);
  return equal ? { ok: true, keyId } : { ok: false, reason: "bad signature" };
}
