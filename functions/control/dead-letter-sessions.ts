import { desc, inArray } from "drizzle-orm";
import type { Db } from "../db/connection.ts";
import { auditEvents } from "../db/schema.ts";

/**
 * Which sessions to ask for dead letters: dead letters live in each SessionDO (its outbox and
 * inbox), and every one is recorded in the audit trail with its session key when it happens. The
 * newest `scan` such records name the sessions worth asking, newest first, at most `limit` of them.
 */
export async function sessionsWithDeadLetters(
  db: Db,
  options: { limit: number; scan?: number },
): Promise<string[]> {
  return sessionsInAudit(db, ["outbox.dead_letter", "inbox.dead_letter"], options);
}

/** The sessions the newest audit records of these kinds name (detail.sessionKey), newest first. */
export async function sessionsInAudit(
  db: Db,
  kinds: string[],
  options: { limit: number; scan?: number },
): Promise<string[]> {
  const rows = await db
    .select({ detail: auditEvents.detail })
    .from(auditEvents)
    .where(inArray(auditEvents.kind, kinds))
    .orderBy(desc(auditEvents.id))
    .limit(options.scan ?? 500);
  const keys: string[] = [];
  for (const { detail } of rows) {
    const key =
      detail !== null && typeof detail === "object"
        ? (detail as Record<string, unknown>).sessionKey
        : undefined;
    if (typeof key === "string" && !keys.includes(key)) keys.push(key);
    if (keys.length >= options.limit) break;
  }
  return keys;
}
