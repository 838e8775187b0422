import { Hono, type Context } from "hono";
import * as z from "zod";
import { withDb } from "../functions/db/client.ts";
import { recordAudit } from "../functions/db/audit.ts";
import { sessionsWithDeadLetters } from "../functions/control/dead-letter-sessions.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";

/**
 * /admin/dead-letters (gateway token): what sessions gave up on, across sessions, and the two
 * operator actions. The rows and the actions live in each SessionDO (dead-letter-admin.ts); this
 * file only finds the sessions (from the audit trail), validates input and audits the action.
 *
 *   GET  /admin/dead-letters?limit=             newest sessions with dead letters, and their letters
 *   POST /admin/dead-letters/retry   { sessionKey, id }   a dead reply chunk goes through the outbox again
 *   POST /admin/dead-letters/discard { sessionKey, id }   removed from the list
 */
type DeadLetterContext = Context<{ Bindings: Env }>;

export const adminDeadLetters = new Hono<{ Bindings: Env }>();
adminDeadLetters.use("*", requireGatewayToken);

const actionSchema = z
  .object({ sessionKey: z.string().min(1).max(512), id: z.string().min(1).max(512) })
  .strict();

function fail(c: DeadLetterContext, status: 400 | 404 | 409, code: string, message: string) {
  return c.json({ error: { message, type: "admin_error", code } }, status);
}

function sessionStub(env: Env, sessionKey: string) {
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionKey));
}

adminDeadLetters.get("/", async (c) => {
  const limit = z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .catch(20)
    .parse(c.req.query("limit") ?? 20);
  const keys = await withDb(c.env, (db) => sessionsWithDeadLetters(db, { limit }));
  const sessions = await Promise.all(
    keys.map(async (sessionKey) => ({
      sessionKey,
      deadLetters: await sessionStub(c.env, sessionKey).deadLetters(),
    })),
  );
  return c.json({ sessions: sessions.filter((session) => session.deadLetters.length) });
});

for (const action of ["retry", "discard"] as const) {
  adminDeadLetters.post(`/${action}`, async (c) => {
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return fail(c, 400, "invalid_body", "body must be JSON");
    }
    const body = actionSchema.safeParse(raw);
    if (!body.success)
      return fail(
        c,
        400,
        "invalid_body",
        body.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "),
      );
    const { sessionKey, id } = body.data;
    const stub = sessionStub(c.env, sessionKey);
    const result =
      action === "retry" ? await stub.retryDeadLetter(id) : await stub.discardDeadLetter(id);
    if (!result.ok)
      return fail(
        c,
        result.status,
        result.status === 404 ? "dead_letter_not_found" : "not_retryable",
        result.reason,
      );
    const actor = c.req.header("cf-connecting-ip")?.trim() || "unknown";
    await withDb(c.env, (db) =>
      recordAudit(db, {
        action: `dead_letter.${action}`,
        actor,
        target: sessionKey,
        detail: { sessionKey, id, kind: result.kind },
      }),
    );
    return c.json({ ok: true, action, sessionKey, id, kind: result.kind, state: result.state });
  });
}
