import type { Context } from "hono";
import { recordAudit, type AuditRecord } from "../functions/db/audit.ts";
import { withDb } from "../functions/db/client.ts";
import { clientAddress } from "./client-address.ts";
import type { Env } from "./env.ts";

/**
 * One audit row for an operator's change through the admin API: the actor is the caller's address
 * (the gateway token is one credential, so the address is what tells two operators apart), the
 * time is the row's. Called after the change succeeded, so the trail never lists what did not
 * happen; a failed write fails the request (500) rather than leaving the change unrecorded
 * silently. `detail` holds ids, kinds and counts — never message text, tokens or secrets.
 */
export async function auditAdminChange(
  c: Context<{ Bindings: Env }>,
  record: Omit<AuditRecord, "actor" | "at">,
): Promise<void> {
  await withDb(c.env, (db) => recordAudit(db, { ...record, actor: clientAddress(c.req.raw) }));
}
