import { sameSecret } from "../../http/same-secret.ts";
import { toHex } from "../companion/signature.ts";

/**
 * Meta's webhook checks (Graph API webhooks, "Verification Requests" and "Event Notifications"):
 * the subscription handshake is a GET with `hub.mode=subscribe`, `hub.verify_token` (the string
 * typed into the app's webhook settings) and `hub.challenge`, answered with the challenge alone
 * only when the token matches; every POST carries `X-Hub-Signature-256: sha256=<hex>`, the
 * HMAC-SHA256 of the raw body keyed with the app secret. No time is signed: a replay is made
 * harmless by the per-message dedup key and the message's own age limit (parse.ts). Both
 * comparisons are constant time (`sameSecret` compares SHA-256 digests, so lengths leak nothing).
 */

/** The `X-Hub-Signature-256` value Meta sends for this body (verify, the fake, `simulate`). */
export async function signHubBody(appSecret: string, raw: Uint8Array | string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(appSecret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const data = typeof raw === "string" ? encoder.encode(raw) : raw;
  const mac = await crypto.subtle.sign("HMAC", key, data as Uint8Array<ArrayBuffer>);
  return `sha256=${toHex(new Uint8Array(mac))}`;
}

/** Whether `header` is this secret's signature of `raw` (an unset secret or header never is). */
export async function signedWith(
  raw: Uint8Array,
  header: string | null,
  appSecret: string | undefined,
): Promise<boolean> {
  if (!header || !appSecret) return false;
  return sameSecret(header.trim().toLowerCase(), await signHubBody(appSecret, raw));
}
