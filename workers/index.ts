import { Hono } from "hono";
import type { Env } from "./env.ts";
import { SessionDO } from "../durable-objects/session.ts";

export { SessionDO };

const app = new Hono<{ Bindings: Env }>();

app.get("/health", (c) => c.json({ ok: true, status: "live" }));

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
