import { Hono } from "hono";
import { CONTROL_PAGE_HTML } from "../web/control/page.ts";
import type { Env } from "./env.ts";
import { htmlPageResponse } from "./html-page.ts";

/**
 * The control page at `/control`. Like the web chat, the page itself holds no data and is public;
 * everything it shows comes from the admin API, which asks for the gateway token on every call
 * (workers/admin.ts). The token is typed into the page and kept in the tab's sessionStorage only.
 */
export const control = new Hono<{ Bindings: Env }>();

control.get("/control", () => htmlPageResponse(CONTROL_PAGE_HTML));
