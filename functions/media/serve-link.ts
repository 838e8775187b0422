import { configFromEnv } from "../channels/gateway-config.ts";
import { mediaStoreFor } from "./store.ts";
import { mediaUrlSecret, verifyMediaUrl } from "./signed-url.ts";

/**
 * The answer to `GET|HEAD /media/<key>?exp=&type=&name=&sig=` (workers/media.ts routes it): one
 * staged file of the media store, for whoever was handed this link (signed-url.ts). A forged,
 * altered or expired link gets 403 with an empty body, whatever the object; only a good link
 * learns whether the object is still there (404 after the bucket's expiry rule removed it).
 *
 * The file is served as the type it was signed with, never sniffed by a browser (`nosniff`), and
 * in a sandbox with no sources (`Content-Security-Policy: sandbox`): an HTML or SVG file the
 * agent sent opens inert, not as a page of this origin that could reach the web chat's storage.
 */
export async function serveMediaLink(
  request: Request,
  env: Record<string, unknown>,
): Promise<Response> {
  const signed = await verifyMediaUrl(
    new URL(request.url),
    mediaUrlSecret(configFromEnv(env), env),
  );
  if (!signed) return new Response(null, { status: 403 });
  const store = mediaStoreFor(env);
  const bytes = store ? await store.get(signed.key) : undefined;
  if (!bytes) return new Response(null, { status: 404 });
  const maxAge = Math.max(0, signed.exp - Math.floor(Date.now() / 1000));
  const headers = {
    "content-type": signed.type,
    "content-length": String(bytes.byteLength),
    // Twilio names the attachment after this (its accepted-content-types guide).
    "content-disposition": `inline; filename*=UTF-8''${encodeURIComponent(signed.name)}`,
    "cache-control": `private, max-age=${maxAge}`,
    "x-content-type-options": "nosniff",
    "content-security-policy": "sandbox; default-src 'none'",
    "referrer-policy": "no-referrer",
  };
  if (request.method === "HEAD") return new Response(null, { headers });
  return new Response(bytes as Uint8Array<ArrayBuffer>, { headers });
}
