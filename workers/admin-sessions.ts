import { Hono } from "hono";
import * as z from "zod";
import { desc, eq } from "drizzle-orm";
import { withDb } from "../functions/db/client.ts";
import { sessions, transcriptEntries } from "../functions/db/schema.ts";
import { postgresAccessStore } from "../functions/routing/access-store-postgres.ts";
import { searchSessions } from "../functions/control/session-search.ts";
import { actorOf, fail } from "./admin-http.ts";
import type { Env } from "./env.ts";

/**
 * The sessions for operators, mounted at /admin/sessions by admin.ts (its requireGatewayToken
 * guards it): a search, one session with its transcript and sandbox, a reset, and the session's
 * dead letters. The session's events and sub-agents have their own files beside this one.
 */
export const adminSessions = new Hono<{ Bindings: Env }>();

adminSessions.get("/", async (c) => {
  const limit = z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .catch(100)
    .parse(c.req.query("limit") ?? 100);
  // `q`: a fragment of the session key, the channel, or the last message's address / sender id.
  const query = c.req.query("q");
  if (query !== undefined && query.length > 200)
    return fail(c, 400, "invalid_query", "q: at most 200 characters");
  const rows = await withDb(c.env, (db) =>
    searchSessions(db, { query, agentId: c.req.query("agent"), limit }),
  );
  return c.json({ sessions: rows.map(sessionJson) });
});

adminSessions.get("/:key", async (c) => {
  const key = c.req.param("key");
  const limit = z.coerce
    .number()
    .int()
    .min(1)
    .max(5000)
    .catch(200)
    .parse(c.req.query("limit") ?? 200);
  const found = await withDb(c.env, async (db) => {
    const [row] = await db.select().from(sessions).where(eq(sessions.sessionKey, key)).limit(1);
    if (!row) return undefined;
    const entries = await db
      .select()
      .from(transcriptEntries)
      .where(eq(transcriptEntries.sessionKey, key))
      .orderBy(desc(transcriptEntries.seq))
      .limit(limit);
    return { row, entries: entries.reverse() };
  });
  if (!found) return fail(c, 404, "session_not_found", `no session "${key}"`);
  // The sandbox lives in the SessionDO (its commands, metered time) and, for containers, its SandboxDO.
  const sandbox = await c.env.SESSIONS.get(c.env.SESSIONS.idFromName(key))
    .sandbox()
    .catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }));
  return c.json({
    session: sessionJson(found.row),
    sandbox,
    transcript: found.entries.map((e) => ({
      seq: e.seq,
      sessionId: e.sessionId,
      role: e.role,
      content: e.content,
      createdAt: e.createdAt.toISOString(),
    })),
  });
});

adminSessions.post("/:key/reset", async (c) => {
  const key = c.req.param("key");
  const exists = await sessionExists(c.env, key);
  if (!exists) return fail(c, 404, "session_not_found", `no session "${key}"`);
  const stub = c.env.SESSIONS.get(c.env.SESSIONS.idFromName(key));
  try {
    const result = await stub.adminReset();
    await withDb(c.env, (db) =>
      postgresAccessStore(db).audit({
        kind: "session.reset",
        actor: actorOf(c),
        detail: { sessionKey: key },
        at: Date.now(),
      }),
    );
    return c.json({ ok: true, sessionKey: key, result: result ?? null });
  } catch (error) {
    return fail(
      c,
      502,
      "session_reset_failed",
      `session reset failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
});

/** Reply chunks the outbox gave up on, and inbound events that failed triage or run setup for good. */
adminSessions.get("/:key/dead-letters", async (c) => {
  const key = c.req.param("key");
  const exists = await sessionExists(c.env, key);
  if (!exists) return fail(c, 404, "session_not_found", `no session "${key}"`);
  const deadLetters = await c.env.SESSIONS.get(c.env.SESSIONS.idFromName(key)).deadLetters();
  return c.json({ sessionKey: key, deadLetters });
});

function sessionJson(row: typeof sessions.$inferSelect) {
  return {
    sessionKey: row.sessionKey,
    sessionId: row.sessionId,
    agentId: row.agentId,
    channel: row.channel,
    chatType: row.chatType,
    modelOverride: row.modelOverride,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    sessionStartedAt: row.sessionStartedAt.toISOString(),
    lastInteractionAt: row.lastInteractionAt?.toISOString() ?? null,
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Whether Postgres knows the session (the SessionDO of an unknown key would be made empty). */
async function sessionExists(env: Env, key: string): Promise<boolean> {
  return withDb(
    env,
    async (db) =>
      (
        await db
          .select({ k: sessions.sessionKey })
          .from(sessions)
          .where(eq(sessions.sessionKey, key))
          .limit(1)
      ).length > 0,
  );
}
