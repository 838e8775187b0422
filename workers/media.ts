import { Hono } from "hono";
import { serveMediaLink } from "../functions/media/serve-link.ts";
import type { Env } from "./env.ts";

/**
 * `GET /media/<key>?exp=&type=&name=&sig=` (and HEAD, which Twilio sends first): a signed link to
 * one staged file (functions/media/serve-link.ts). Public, since LINE's and Twilio's fetchers carry
 * no credential: the signature is the credential.
 */
export const media = new Hono<{ Bindings: Env }>();

media.get("/media/*", (c) =>
  serveMediaLink(c.req.raw, c.env as unknown as Record<string, unknown>),
);
