/**
 * Request signing between the companion container and the Worker (DESIGN.md "Channels: Worker or
 * companion"): HMAC-SHA256 over the version, timestamp, method, path, key id and the body's SHA-256,
 * so a captured request cannot be replayed later (300 s window), re-pointed at another path, or
 * re-signed under another key. Two keys may be live at once, for rotation.
 */
export const SIGNATURE_VERSION = "v1";
export const SIGNATURE_WINDOW_SECONDS = 300;

export const HEADER_KEY_ID = "x-edgeclaw-key-id";
export const HEADER_TIMESTAMP = "x-edgeclaw-timestamp";
export const HEADER_SIGNATURE = "x-edgeclaw-signature";

export interface SigningKey {
  id: string;
  secret: string;
}

export interface SignedParts {
  method: string;
  path: string;
  body: Uint8Array;
  timestamp: number;
  keyId: string;
}

const encoder = new TextEncoder();

async function sha256Hex(data: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", data)));
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return toHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message))));
}

export async function signatureBase(parts: SignedParts): Promise<string> {
  return [SIGNATURE_VERSION, String(parts.timestamp), parts.method.toUpperCase(), parts.path, parts.keyId, await sha256Hex(parts.body)].join("\n");
}

/** Headers for a signed request (used by the companion, the tests and the benchmarks). */
export async function signRequest(key: SigningKey, parts: Omit<SignedParts, "keyId">): Promise<Record<string, string>> {
  const base = await signatureBase({ ...parts, keyId: key.id });
  return {
    [HEADER_KEY_ID]: key.id,
    [HEADER_TIMESTAMP]: String(parts.timestamp),
    [HEADER_SIGNATURE]: `${SIGNATURE_VERSION}=${await hmacHex(key.secret, base)}`,
  };
}

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
  if (!keyId || !timestampText || !signature) return { ok: false, reason: "missing signature headers" };
  if (!/^\d{1,12}$/.test(timestampText)) return { ok: false, reason: "malformed timestamp" };
  const timestamp = Number(timestampText);
  if (Math.abs(args.nowSeconds - timestamp) > SIGNATURE_WINDOW_SECONDS) return { ok: false, reason: "stale timestamp" };
  const key = args.keys.find((candidate) => candidate.id === keyId);
  if (!key) return { ok: false, reason: "unknown key id" };
  const expected = `${SIGNATURE_VERSION}=${await hmacHex(key.secret, await signatureBase({ method: args.method, path: args.path, body: args.body, timestamp, keyId }))}`;
  const given = encoder.encode(signature);
  const wanted = encoder.encode(expected);
  // Lengths of well-formed signatures are public; compare the bytes in constant time (workerd API).
  const equal = given.byteLength === wanted.byteLength && crypto.subtle.timingSafeEqual(given, wanted);
  return equal ? { ok: true, keyId } : { ok: false, reason: "bad signature" };
}
