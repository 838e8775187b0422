import { and, desc, eq, inArray } from "drizzle-orm";
import { withDb, type DbEnv } from "../db/client.ts";
import { execApprovals } from "../db/schema.ts";
import { commandSegments, trustable } from "./approval.ts";

/**
 * `/approve <id> allow-always` made durable (tools__exec-approvals.md): the approved command's
 * pipeline segments are stored per agent in Postgres (runtime state, like pairing approvals), each
 * bound to its exact text as OpenClaw's generated entries are bound to their argv, and count as
 * allowlisted for that agent from then on (approval.ts). A command allow-always cannot bind to
 * (quotes, globs, chains, redirections, expansion) runs once and is stored nowhere. Entries are
 * listed and revoked through the admin API (`edgeclaw approvals`).
 */

/** Entries one agent may hold: a bound on what every exec of a policy-checked agent reads. */
export const MAX_TRUSTED_PER_AGENT = 500;

export type TrustOutcome =
  | { kind: "stored"; segments: string[] }
  | { kind: "unbindable"; reason: string };

export interface TrustedCommand {
  id: string;
  agentId: string;
  segment: string;
  executable: string;
  approvedBy: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/** What allow-always would store for this command, or why it cannot. */
export function segmentsToTrust(command: string): TrustOutcome {
  const segments = commandSegments(command);
  if (!segments)
    return {
      kind: "unbindable",
      reason:
        "it uses shell syntax (chains, redirections, $(…), line breaks) an approval cannot bind to",
    };
  const loose = segments.find((segment) => !trustable(segment));
  if (loose !== undefined)
    return {
      kind: "unbindable",
      reason: `\`${loose.slice(0, 80)}\` has quotes, globs or variables, so its text is not exactly what runs`,
    };
  return { kind: "stored", segments };
}

export async function trustCommand(
  env: DbEnv,
  agentId: string,
  command: string,
  approvedBy: string,
): Promise<TrustOutcome> {
  const outcome = segmentsToTrust(command);
  if (outcome.kind !== "stored") return outcome;
  await withDb(env, async (db) => {
    const held = await db
      .select({ id: execApprovals.id })
      .from(execApprovals)
      .where(eq(execApprovals.agentId, agentId))
      .limit(MAX_TRUSTED_PER_AGENT + 1);
    if (held.length + outcome.segments.length > MAX_TRUSTED_PER_AGENT)
      throw new TrustLimitError(agentId);
    await db
      .insert(execApprovals)
      .values(
        outcome.segments.map((segment) => ({
          id: crypto.randomUUID(),
          agentId,
          segment,
          executable: segment.split(" ")[0] ?? segment,
          approvedBy,
        })),
      )
      .onConflictDoNothing();
  });
  return outcome;
}

export class TrustLimitError extends Error {
  constructor(agentId: string) {
    super(
      `agent ${agentId} already has ${MAX_TRUSTED_PER_AGENT} always-allowed commands: revoke some (edgeclaw approvals list / revoke) or put a pattern in tools.exec.allowlist`,
    );
  }
}

/** The agent's stored segments (what decideExec matches against). */
export async function trustedSegments(env: DbEnv, agentId: string): Promise<string[]> {
  return withDb(env, async (db) =>
    (
      await db
        .select({ segment: execApprovals.segment })
        .from(execApprovals)
        .where(eq(execApprovals.agentId, agentId))
        .limit(MAX_TRUSTED_PER_AGENT)
    ).map((row) => row.segment),
  );
}

/** Marks the entries a command was allowed by as used (shown in the list). Best effort. */
export async function touchTrusted(env: DbEnv, agentId: string, segments: string[]): Promise<void> {
  if (!segments.length) return;
  await withDb(env, (db) =>
    db
      .update(execApprovals)
      .set({ lastUsedAt: new Date() })
      .where(and(eq(execApprovals.agentId, agentId), inArray(execApprovals.segment, segments))),
  );
}

export async function listTrusted(env: DbEnv, agentId?: string): Promise<TrustedCommand[]> {
  const rows = await withDb(env, (db) =>
    db
      .select()
      .from(execApprovals)
      .where(agentId ? eq(execApprovals.agentId, agentId) : undefined)
      .orderBy(desc(execApprovals.createdAt))
      .limit(5000),
  );
  return rows.map((row) => ({
    id: row.id,
    agentId: row.agentId,
    segment: row.segment,
    executable: row.executable,
    approvedBy: row.approvedBy,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  }));
}

/** Removes one entry; the removed row, or undefined when there was none. */
export async function revokeTrusted(env: DbEnv, id: string): Promise<TrustedCommand | undefined> {
  const [row] = await withDb(env, (db) =>
    db.delete(execApprovals).where(eq(execApprovals.id, id)).returning(),
  );
  if (!row) return undefined;
  return {
    id: row.id,
    agentId: row.agentId,
    segment: row.segment,
    executable: row.executable,
    approvedBy: row.approvedBy,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  };
}
