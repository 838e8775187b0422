import { and, desc, eq, ilike, or, sql } from "drizzle-orm";
import type { Db } from "../db/connection.ts";
import { sessions } from "../db/schema.ts";

/**
 * The session index (Postgres, mirrored from each SessionDO), searched the way an operator looks
 * for a conversation: a fragment of its session key, its channel, or the platform address / sender
 * id of its last message. Matching is a case-insensitive substring; LIKE wildcards in the query are
 * taken literally. Newest activity first.
 */
export async function searchSessions(
  db: Db,
  options: { query?: string; agentId?: string; limit: number },
): Promise<Array<typeof sessions.$inferSelect>> {
  const query = options.query?.trim();
  const pattern = query ? `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;
  return db
    .select()
    .from(sessions)
    .where(
      and(
        options.agentId ? eq(sessions.agentId, options.agentId) : undefined,
        pattern
          ? or(
              ilike(sessions.sessionKey, pattern),
              ilike(sessions.channel, pattern),
              sql`${sessions.lastRoute}->>'to' ilike ${pattern}`,
              sql`${sessions.lastRoute}->'extra'->>'senderId' ilike ${pattern}`,
            )
          : undefined,
      ),
    )
    .orderBy(desc(sessions.updatedAt))
    .limit(options.limit);
}
