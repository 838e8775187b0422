import { and, desc, eq, lt } from "drizzle-orm";
import type { Db } from "./connection.ts";
import { auditEvents } from "./schema.ts";

/**
 * The audit trail's one writer and reader. Security-relevant actions call `recordAudit` with who did
 * what to what: `{ actor: "203.0.113.9", action: "pairing.approved", target: "slack:U123", detail }`.
 * Never message text in `detail` (ids, reasons, amounts only). Not for the ack path: callers are the
 * admin API, Durable Objects' alarm passes and ctx.waitUntil work.
 */
export interface AuditRecord {
  actor?: string | null;
  action: string;
  target?: string | null;
  detail?: Record<string, unknown>;
  at?: number;
}

export async function recordAudit(db: Db, record: AuditRecord): Promise<void> {
  await db.insert(auditEvents).values({
    kind: record.action,
    actor: record.actor ?? null,
    target: record.target ?? null,
    detail: record.detail ?? {},
    ...(record.at !== undefined ? { createdAt: new Date(record.at) } : {}),
  });
}

export interface AuditEntry {
  id: number;
  action: string;
  actor: string | null;
  target: string | null;
  detail: unknown;
  at: string;
}

/** Newest first; `before` (an id) pages back; `action` filters by exact action. */
export async function listAudit(
  db: Db,
  options: { limit: number; before?: number; action?: string },
): Promise<AuditEntry[]> {
  const rows = await db
    .select()
    .from(auditEvents)
    .where(
      and(
        options.action ? eq(auditEvents.kind, options.action) : undefined,
        options.before ? lt(auditEvents.id, options.before) : undefined,
      ),
    )
    .orderBy(desc(auditEvents.id))
    .limit(options.limit);
  return rows.map((row) => ({
    id: row.id,
    action: row.kind,
    actor: row.actor,
    target: row.target,
    detail: row.detail,
    at: row.createdAt.toISOString(),
  }));
}
