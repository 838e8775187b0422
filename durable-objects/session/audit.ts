import { withDb, type DbEnv } from "../../functions/db/client.ts";
import { recordAudit } from "../../functions/db/audit.ts";

/** Appends one row to the audit trail (security and reliability events an operator must see). */
export async function recordAuditEvent(
  env: DbEnv,
  kind: string,
  detail: Record<string, unknown>,
  actor?: string,
): Promise<void> {
  if (!env.DATABASE_URL) return;
  const target = typeof detail.sessionKey === "string" ? detail.sessionKey : null;
  await withDb(env, (db) =>
    recordAudit(db, { action: kind, actor: actor ?? null, target, detail }),
  );
}
