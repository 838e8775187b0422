import { withDb, type DbEnv } from "../../functions/db/client.ts";
import { auditEvents } from "../../functions/db/schema.ts";

/** Appends one row to the audit trail (security and reliability events an operator must see). */
export async function recordAuditEvent(env: DbEnv, kind: string, detail: Record<string, unknown>, actor?: string): Promise<void> {
  if (!env.DATABASE_URL) return;
  await withDb(env, (db) => db.insert(auditEvents).values({ kind, actor: actor ?? null, detail }).then(() => undefined));
}
