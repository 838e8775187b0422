import { resolveSecret } from "../config/secret-ref.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import { sameSecret } from "../http/same-secret.ts";
import type { OutboundFileRef } from "./outbound.ts";

/**
 * Signed public media URLs: `GET <gateway.publicUrl>/media/<key>?exp=&type=&name=&sig=`, for the
 * platforms that take a file only as a link they fetch themselves (LINE's `originalContentUrl`,
 * Twilio's `MediaUrl`). Only the outbox mints them, for the row it is sending (the channel's
 * `sendFile`), so the only objects reachable this way are ones staged for sending; nothing in a URL
 * is guessable, and every part the route answers with (key, type, name, expiry) is under the MAC.
 *
 * The key is derived, never the secret itself: HMAC-SHA256(secret, "edgeclaw media url v1"), where
 * the secret is `EDGECLAW_MEDIA_URL_SECRET` when set, else the gateway's own token or password
 * (a deploy has one). Rotating that secret invalidates every link already handed out.
 */

export const MEDIA_URL_PATH = "/media/";
/** No link lives longer than this, whatever a caller asks for (a leaked link stops working). */
export const MEDIA_URL_MAX_TTL_SECONDS = 30 * 24 * 60 * 60;

interface SignedFields {
  key: string;
  exp: number;
  type: string;
  name: string;
}

/** The secret links are signed with, or undefined when the deployment has none to use. */
export function mediaUrlSecret(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
): string | undefined {
  const own = env.EDGECLAW_MEDIA_URL_SECRET;
  if (typeof own === "string" && own) return own;
  const auth = config.gateway.auth;
  const candidates = [
    resolveSecret(auth.token, env),
    env.EDGECLAW_GATEWAY_TOKEN,
    env.OPENCLAW_GATEWAY_TOKEN,
    resolveSecret(auth.password, env),
    env.OPENCLAW_GATEWAY_PASSWORD,
  ];
  return candidates.find((value): value is string => typeof value === "string" && value !== "");
}

/**
 * Why this deployment cannot hand a platform a link to a file, or undefined when it can. Told in
 * the reply's one line for the file, before anything is staged.
 */
export function mediaUrlUnavailable(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
): string | undefined {
  if (!config.gateway.publicUrl)
    return "gateway.publicUrl is not set (this platform fetches files from a public link)";
  if (!mediaUrlSecret(config, env))
    return "no secret to sign media links with (EDGECLAW_MEDIA_URL_SECRET or the gateway token)";
  return undefined;
}

/** A link to the staged file, valid for `ttlSeconds` from `now`. Throws when no link can be made. */
export async function signMediaUrl(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
  file: Pick<OutboundFileRef, "ref" | "mimeType" | "name">,
  ttlSeconds: number,
  now = Date.now(),
): Promise<string> {
  const missing = mediaUrlUnavailable(config, env);
  if (missing) throw new Error(missing);
  const path = await signMediaPath(mediaUrlSecret(config, env)!, file, ttlSeconds, now);
  return `${config.gateway.publicUrl!.replace(/\/+$/, "")}${path}`;
}

/**
 * The path and query of a link (`/media/<key>?…`), for a page served by this Worker itself (the
 * web chat loads its files from its own origin, so no public URL is needed).
 */
export async function signMediaPath(
  secret: string,
  file: Pick<OutboundFileRef, "ref" | "mimeType" | "name">,
  ttlSeconds: number,
  now = Date.now(),
): Promise<string> {
  const fields: SignedFields = {
    key: file.ref,
    exp: Math.floor(now / 1000) + Math.min(ttlSeconds, MEDIA_URL_MAX_TTL_SECONDS),
    type: file.mimeType,
    name: file.name,
  };
  const sig = await mac(secret, fields);
  const path = fields.key.split("/").map(encodeURIComponent).join("/");
  const query = new URLSearchParams({
    exp: String(fields.exp),
    type: fields.type,
    name: fields.name,
    sig,
  });
  return `${MEDIA_URL_PATH}${path}?${query.toString()}`;
}

/**
 * The signed fields of a request's URL when its signature is good and it has not expired, else
 * undefined (the route answers 403 and nothing else). The comparison takes the same time wherever
 * a forged signature differs.
 */
export async function verifyMediaUrl(
  url: URL,
  secret: string | undefined,
  now = Date.now(),
): Promise<SignedFields | undefined> {
  if (!secret || !url.pathname.startsWith(MEDIA_URL_PATH)) return undefined;
  let key: string;
  try {
    key = url.pathname.slice(MEDIA_URL_PATH.length).split("/").map(decodeURIComponent).join("/");
  } catch {
    return undefined;
  }
  const q = url.searchParams;
  const exp = Number(q.get("exp"));
  const type = q.get("type");
  const name = q.get("name");
  const sig = q.get("sig");
  if (!key.startsWith("media/") || !Number.isSafeInteger(exp) || !type || name === null || !sig)
    return undefined;
  if (/[\n\r]/.test(key + type)) return undefined;
  const fields: SignedFields = { key, exp, type, name };
  // The signature is checked before the time, so an expired link and a forged one look the same.
  const good = await sameSecret(sig, await mac(secret, fields));
  const nowSeconds = Math.floor(now / 1000);
  if (!good || exp < nowSeconds || exp > nowSeconds + MEDIA_URL_MAX_TTL_SECONDS) return undefined;
  return fields;
}

async function mac(secret: string, fields: SignedFields): Promise<string> {
  const encoder = new TextEncoder();
  const hmac = async (keyBytes: Uint8Array, data: string) => {
    const key = await crypto.subtle.importKey(
      "raw",
      keyBytes as Uint8Array<ArrayBuffer>,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(data)));
  };
  const derived = await hmac(encoder.encode(secret), "edgeclaw media url v1");
  // Newline-separated: the key, the type and the number never hold one (verifyMediaUrl refuses
  // them), so only the name, last, may, and the split cannot shift.
  const signed = await hmac(
    derived,
    ["v1", fields.key, String(fields.exp), fields.type, fields.name].join("\n"),
  );
  return btoa(String.fromCharCode(...signed))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}
