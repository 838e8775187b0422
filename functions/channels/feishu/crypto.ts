/**
 * Feishu / Lark event crypto (Open Platform "Encrypt Key" docs; the SDKs' AESCipher), in WebCrypto:
 *
 * - Body encryption: `{"encrypt":"<base64>"}`; the blob is IV (16 bytes) ‖ AES-256-CBC ciphertext with
 *   PKCS#7 padding, keyed with SHA-256(encryptKey as UTF-8).
 * - Signature: `X-Lark-Signature` = lowercase hex SHA-256 (a plain hash, not an HMAC) of the UTF-8
 *   string timestamp + nonce + encryptKey followed by the raw (still encrypted) body bytes.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

async function aesKey(encryptKey: string, usage: "encrypt" | "decrypt"): Promise<CryptoKey> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(encryptKey));
  return crypto.subtle.importKey("raw", digest, { name: "AES-CBC" }, false, [usage]);
}

/** The plaintext of an `encrypt` field, or undefined when it is not base64, too short, or does not decrypt (bad padding, not UTF-8). */
export async function decryptFeishu(
  encryptKey: string,
  encrypted: string,
): Promise<string | undefined> {
  const blob = decodeBase64(encrypted);
  // IV plus at least one block, whole blocks only.
  if (!blob || blob.byteLength < 32 || blob.byteLength % 16 !== 0) return undefined;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-CBC", iv: blob.slice(0, 16) },
      await aesKey(encryptKey, "decrypt"),
      blob.slice(16),
    );
    return decoder.decode(plain);
  } catch {
    return undefined;
  }
}

/** What Feishu would put in `encrypt` for `plaintext` (tests, the bench and `simulate`). */
export async function encryptFeishu(
  encryptKey: string,
  plaintext: string,
  iv: Uint8Array = crypto.getRandomValues(new Uint8Array(16)),
): Promise<string> {
  const cipher = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-CBC", iv: iv as Uint8Array<ArrayBuffer> },
      await aesKey(encryptKey, "encrypt"),
      encoder.encode(plaintext),
    ),
  );
  const blob = new Uint8Array(16 + cipher.byteLength);
  blob.set(iv, 0);
  blob.set(cipher, 16);
  let binary = "";
  for (const byte of blob) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** `X-Lark-Signature` for a request: hex SHA-256(timestamp + nonce + encryptKey ‖ raw body). */
export async function signFeishuRequest(
  timestamp: string,
  nonce: string,
  encryptKey: string,
  raw: Uint8Array | string,
): Promise<string> {
  const prefix = encoder.encode(timestamp + nonce + encryptKey);
  const body = typeof raw === "string" ? encoder.encode(raw) : raw;
  const data = new Uint8Array(prefix.byteLength + body.byteLength);
  data.set(prefix, 0);
  data.set(body, prefix.byteLength);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function decodeBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** workerd's `crypto.subtle.timingSafeEqual`, with a constant-time fallback for Node-side scripts. */
export function constantTimeEqualText(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  if (left.byteLength !== right.byteLength) return false;
  const subtle = crypto.subtle as SubtleCrypto & {
    timingSafeEqual?(a: ArrayBufferView, b: ArrayBufferView): boolean;
  };
  if (typeof subtle.timingSafeEqual === "function") return subtle.timingSafeEqual(left, right);
  let diff = 0;
  for (let i = 0; i < left.byteLength; i++) diff |= left[i]! ^ right[i]!;
  return diff === 0;
}
