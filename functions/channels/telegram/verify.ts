/**
 * Telegram does not sign webhook bodies. `setWebhook` takes a `secret_token` (1–256 characters of
 * `A-Z a-z 0-9 _ -`), and Telegram sends it back verbatim in `X-Telegram-Bot-Api-Secret-Token` on
 * every update (https://core.telegram.org/bots/api#setwebhook). The check compares SHA-256 digests
 * of both values in constant time, so neither the content nor the length of the secret leaks
 * through timing. No secret configured → every request is refused (fail closed).
 */

export const TELEGRAM_SECRET_HEADER = "x-telegram-bot-api-secret-token";
export const TELEGRAM_SECRET_TOKEN_PATTERN = /^[A-Za-z0-9_-]{1,256}$/;

export type TelegramVerifyResult =
  | { ok: true }
  | { ok: false; reason: "no-secret" | "missing-header" | "bad-secret" };

const encoder = new TextEncoder();

export async function verifyTelegramSecret(
  headers: Headers,
  expectedSecret: string | undefined,
): Promise<TelegramVerifyResult> {
  if (!expectedSecret) return { ok: false, reason: "no-secret" };
  const given = headers.get(TELEGRAM_SECRET_HEADER);
  if (given === null || given === "") return { ok: false, reason: "missing-header" };
  const [a, b] = await Promise.all([digest(given), digest(expectedSecret)]);
  return constantTimeEqual(a, b) ? { ok: true } : { ok: false, reason: "bad-secret" };
}

/** A fresh secret_token for setWebhook: 48 URL-safe characters from 36 random bytes. */
export function generateTelegramSecretToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(36));
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function digest(value: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
}

/** workerd's `crypto.subtle.timingSafeEqual`; Node (scripts, bench) has none, so a plain XOR fold stands in. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const subtle = crypto.subtle as SubtleCrypto & {
    timingSafeEqual?(a: ArrayBufferView, b: ArrayBufferView): boolean;
  };
  if (typeof subtle.timingSafeEqual === "function") return subtle.timingSafeEqual(a, b);
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
