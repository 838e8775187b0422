import { Hono } from "hono";
import type { Env } from "./env.ts";

/**
 * /admin/sessions/:key/events/:dedupKey (gateway token): what the session did with one accepted
 * event — pending (not triaged yet), accepted (queued for a run or answered by one), pairing,
 * refused with the reason and the config key that would change it, kept as group context (no
 * mention), a system event kept as context, answered by a command, or dead-lettered. A webhook's
 * answer names the events it stored (`x-edgeclaw-event`), so `edgeclaw simulate` asks here after
 * posting instead of waiting out its timeout. It asks the SessionDO directly: a refused stranger
 * never gets a row in Postgres' session index.
 */
// Mounted under /admin/sessions beside admin.ts's own /sessions routes: admin.ts's requireGatewayToken
// already guards every path there (a second guard would count each wrong token twice).
export const adminSessionEvents = new Hono<{ Bindings: Env }>();

/** What the session did with one accepted event (outcome, reason, configKey); 404 when it holds none. */
adminSessionEvents.get("/:key/events/:dedupKey", async (c) => {
  const key = c.req.param("key");
  const dedupKey = c.req.param("dedupKey");
  if (key.length > 512 || dedupKey.length > 512)
    return c.json(
      {
        error: {
          message: "session key and dedup key: at most 512 characters",
          type: "admin_error",
          code: "invalid_key",
        },
      },
      400,
    );
  const decision = await c.env.SESSIONS.get(c.env.SESSIONS.idFromName(key)).eventDecision(dedupKey);
  if (!decision)
    return c.json(
      {
        error: {
          message: `session "${key}" holds no event "${dedupKey}"`,
          type: "admin_error",
          code: "event_not_found",
        },
      },
      404,
    );
  return c.json({ sessionKey: key, ...decision });
});
