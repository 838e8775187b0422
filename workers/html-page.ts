import { NONCE_PLACEHOLDER } from "../web/page-shell.ts";

/**
 * An operator page (web chat, control page) as a response: its one script and one style block run
 * by a per-response nonce (the placeholder web/page-shell.ts puts in both), it may talk to this origin only, may not be
 * framed, and is never cached (it is small, and a stale script against a newer API is worse).
 */
export function htmlPageResponse(html: string): Response {
  const nonce = randomNonce();
  return new Response(html.replaceAll(NONCE_PLACEHOLDER, nonce), {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": [
        "default-src 'none'",
        `script-src 'nonce-${nonce}'`,
        `style-src 'nonce-${nonce}'`,
        "connect-src 'self'",
        "img-src 'self' data:",
        // The web chat plays the agent's voice replies from this origin's signed media links.
        "media-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ].join("; "),
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
    },
  });
}

function randomNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}
