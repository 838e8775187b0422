import { Hono } from "hono";
import { configFromEnv } from "../functions/config/load.ts";
import { CHAT_PAGE_HTML } from "../web/chat-page.ts";
import type { Env } from "./env.ts";

/**
 * The web chat page at `/`. The page itself is public (it holds no data); everything it shows
 * comes from the token-protected /v1 API. It is served only while that API is enabled, and with a
 * strict Content-Security-Policy: its one script and one style block run by per-response nonce,
 * and it may talk to this origin only.
 */
export const webchat = new Hono<{ Bindings: Env }>();

webchat.get("/", (c) => {
  if (!configFromEnv(c.env).gateway.http.endpoints.chatCompletions.enabled) {
    return c.text("The web chat is off: gateway.http.endpoints.chatCompletions.enabled is false.\n", 404);
  }
  const nonce = randomNonce();
  return new Response(CHAT_PAGE_HTML.replaceAll("__NONCE__", nonce), {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": [
        "default-src 'none'",
        `script-src 'nonce-${nonce}'`,
        `style-src 'nonce-${nonce}'`,
        "connect-src 'self'",
        "img-src 'self' data:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ].join("; "),
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
    },
  });
});

function randomNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}
