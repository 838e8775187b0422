import { Hono } from "hono";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { CHAT_PAGE_HTML } from "../web/chat-page.ts";
import type { Env } from "./env.ts";
import { htmlPageResponse } from "./html-page.ts";

/**
 * The web chat page at `/`. The page itself is public (it holds no data); everything it shows
 * comes from the token-protected /v1 API. It is served only while that API is enabled, and with a
 * strict Content-Security-Policy (html-page.ts).
 */
export const webchat = new Hono<{ Bindings: Env }>();

webchat.get("/", (c) => {
  if (!configFromEnv(c.env).gateway.http.endpoints.chatCompletions.enabled) {
    return c.text(
      "The web chat is off: gateway.http.endpoints.chatCompletions.enabled is false.\n",
      404,
    );
  }
  return htmlPageResponse(CHAT_PAGE_HTML);
});
