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

export const encoder = new TextEncoder();

async function sha256Hex(data: Uint8Array): Promise<string> {
  // slice(): a copy backed by a plain ArrayBuffer, as WebCrypto's types require.
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", data.slice())));
}

export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

export async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return toHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message))));
}

export async function signatureBase(parts: SignedParts): Promise<string> {
  return [
    SIGNATURE_VERSION,
    String(parts.timestamp),
    parts.method.toUpperCase(),
    parts.path,
    parts.keyId,
    await sha256Hex(parts.body),
  ].join("\n");
}

/** Headers for a signed request (used by the companion, the tests and the benchmarks). */
export async function signRequest(
  key: SigningKey,
  parts: Omit<SignedParts, "keyId">,
): Promise<Record<string, string>> {
  const base = await signatureBase({ ...parts, keyId: key.id });
  return {
    [HEADER_KEY_ID]: key.id,
    [HEADER_TIMESTAMP]: String(parts.timestamp),
    [HEADER_SIGNATURE]: `${SIGNATURE_VERSION}=${await hmacHex(key.secret, base)}`,
  };
}
