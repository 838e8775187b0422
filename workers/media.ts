import { Hono } from "hono";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { mediaStoreFor } from "../functions/media/store.ts";
import { mediaUrlSecret, verifyMediaUrl } from "../functions/media/signed-url.ts";
import type { Env } from "./env.ts";

/**
 * `GET /media/<key>?exp=&type=&name=&sig=` (and HEAD, which Twilio sends first): one staged file
 * of the media store, for the platform that was handed this link (functions/media/signed-url.ts).
 * Public, since LINE's and Twilio's fetchers carry no credential; the signature is the credential.
 * A forged, altered or expired link gets 403 with an empty body, whatever the object; only a good
 * link learns whether the object is still there (404 after the bucket's expiry rule removed it).
 *
 * The file is served as the type it was signed with, never sniffed by the browser (`nosniff`),
 * and in a sandbox with no sources (`Content-Security-Policy: sandbox`): an HTML or SVG file the
 * agent sent opens inert, not as a page of this origin that could reach the web chat's storage.
 */
export const media = new Hono<{ Bindings: Env }>();

media.get("/media/*", async (c) => {
  const env = c.env as unknown as Record<string, unknown>;
  const signed = await verifyMediaUrl(
    new URL(c.req.url),
    mediaUrlSecret(configFromEnv(c.env), env),
  );
  if (!signed) return new Response(null, { status: 403 });
  const store = mediaStoreFor(env);
  const bytes = store ? await store.get(signed.key) : undefined;
  if (!bytes) return new Response(null, { status: 404 });
  const maxAge = Math.max(0, signed.exp - Math.floor(Date.now() / 1000));
  return new Response(bytes as Uint8Array<ArrayBuffer>, {
    headers: {
      "content-type": signed.type,
      "content-length": String(bytes.byteLength),
      // Twilio names the attachment after this (its accepted-content-types guide).
      "content-disposition": `inline; filename*=UTF-8''${encodeURIComponent(signed.name)}`,
      "cache-control": `private, max-age=${maxAge}`,
      "x-content-type-options": "nosniff",
      "content-security-policy": "sandbox; default-src 'none'",
      "referrer-policy": "no-referrer",
    },
  });
});
