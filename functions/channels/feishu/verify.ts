import type { WebhookRequest } from "../channel.ts";
import { constantTimeEqualText, decryptFeishu, signFeishuRequest } from "./crypto.ts";
import type { FeishuSecrets } from "./config.ts";

/**
 * Who may post to a Feishu webhook path (event subscription "Request URL"):
 *
 * - With an Encrypt Key: the body must be `{"encrypt": …}` and carry `X-Lark-Request-Timestamp`,
 *   `X-Lark-Request-Nonce` and `X-Lark-Signature` (hex SHA-256 over timestamp + nonce + key + raw
 *   body, within `signatureMaxAgeSeconds` of our clock, so a captured request cannot be replayed
 *   later). The one request Feishu may send unsigned is the console's `url_verification`; it is
 *   accepted only when it decrypts and carries the app's Verification Token.
 * - Without one: the plain body's token (`header.token` in schema 2.0, `token` in 1.0 and in the
 *   challenge) must equal the Verification Token, compared in constant time.
 * - Neither configured: nothing is accepted (fail closed).
 *
 * The decoded body is remembered for `parse` (keyed by the raw bytes, read once by the handler).
 */

export type FeishuVerifyReason =
  | "no-secret"
  | "not-json"
  | "expected-encrypted-body"
  | "unexpected-encrypted-body"
  | "missing-signature"
  | "bad-timestamp"
  | "stale-timestamp"
  | "bad-signature"
  | "undecryptable"
  | "bad-token";

export type FeishuVerifyResult =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; reason: FeishuVerifyReason };

const decoded = new WeakMap<Uint8Array, Record<string, unknown>>();

/** The verified, decrypted body of a request `verifyFeishuRequest` accepted. */
export function verifiedFeishuBody(raw: Uint8Array): Record<string, unknown> | undefined {
  return decoded.get(raw);
}

export async function verifyFeishuRequest(
  request: Pick<WebhookRequest, "raw" | "headers" | "receivedAt">,
  secrets: Pick<FeishuSecrets, "encryptKey" | "verificationToken">,
  maxAgeSeconds: number,
): Promise<FeishuVerifyResult> {
  const { encryptKey, verificationToken } = secrets;
  if (!encryptKey && !verificationToken) return { ok: false, reason: "no-secret" };
  const outer = jsonObject(request.raw);
  if (!outer) return { ok: false, reason: "not-json" };

  let body: Record<string, unknown>;
  if (encryptKey) {
    if (typeof outer.encrypt !== "string") return { ok: false, reason: "expected-encrypted-body" };
    const timestamp = request.headers.get("x-lark-request-timestamp");
    const nonce = request.headers.get("x-lark-request-nonce");
    const signature = request.headers.get("x-lark-signature");
    const signed = timestamp !== null || nonce !== null || signature !== null;
    if (signed) {
      if (timestamp === null || nonce === null || signature === null)
        return { ok: false, reason: "missing-signature" };
      if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: "bad-timestamp" };
      if (Math.abs(request.receivedAt / 1000 - Number(timestamp)) > maxAgeSeconds)
        return { ok: false, reason: "stale-timestamp" };
      const expected = await signFeishuRequest(timestamp, nonce, encryptKey, request.raw);
      if (!constantTimeEqualText(expected, signature.trim().toLowerCase()))
        return { ok: false, reason: "bad-signature" };
    }
    const plain = await decryptFeishu(encryptKey, outer.encrypt);
    const inner = plain === undefined ? undefined : jsonObject(plain);
    if (!inner) return { ok: false, reason: "undecryptable" };
    if (!signed) {
      // Only the console's challenge comes unsigned, and only with the app's token.
      if (inner.type !== "url_verification" || !verificationToken)
        return { ok: false, reason: "missing-signature" };
    }
    body = inner;
  } else {
    if ("encrypt" in outer) return { ok: false, reason: "unexpected-encrypted-body" };
    body = outer;
  }

  if (verificationToken) {
    const token = bodyToken(body);
    if (token === undefined || !constantTimeEqualText(token, verificationToken))
      return { ok: false, reason: "bad-token" };
  }
  decoded.set(request.raw, body);
  return { ok: true, body };
}

/** `header.token` (schema 2.0) or `token` (1.0, url_verification). */
function bodyToken(body: Record<string, unknown>): string | undefined {
  const header = body.header;
  if (
    typeof header === "object" &&
    header !== null &&
    typeof (header as Record<string, unknown>).token === "string"
  )
    return (header as Record<string, string>).token;
  return typeof body.token === "string" ? body.token : undefined;
}

function jsonObject(raw: Uint8Array | string): Record<string, unknown> | undefined {
  try {
    const text =
      typeof raw === "string"
        ? raw
        : new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(raw);
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
