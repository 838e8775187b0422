import { and, asc, desc, eq, inArray, isNotNull, lte, min, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { cronJobs, cronRuns } from "../db/schema.ts";
import {
  defaultTarget,
  isolatedSessionKey,
  type CronJob,
  type CronRun,
  type JobInput,
  type JobPatch,
} from "./cron-job.ts";
import { firstDue, nextDueAfter, normalizeSchedule, type StoredSchedule } from "./schedule.ts";
import { mainSessionKey } from "../routing/session-key.ts";
import { PermanentError } from "../core/errors.ts";

/**
 * The cron tables (functions/db/schema.ts) behind the admin API, the CLI, the cron tool and the
 * scheduler Durable Object. Postgres is the source of truth for jobs and their history; the
 * scheduler only keeps one alarm for the earliest `next_run_at`.
 */

type JobRow = typeof cronJobs.$inferSelect;
type RunRow = typeof cronRuns.$inferSelect;

function toJob(row: JobRow): CronJob {
  return {
    id: row.id,
    agentId: row.agentId,
    name: row.name,
    enabled: row.enabled === 1,
    schedule: row.schedule as StoredSchedule,
    sessionTarget: row.sessionTarget === "main" ? "main" : "isolated",
    wakeMode: row.wakeMode === "now" ? "now" : "next-heartbeat",
    payload: row.payload as CronJob["payload"],
    delivery: row.delivery as CronJob["delivery"],
    deleteAfterRun: row.deleteAfterRun === 1,
    nextRunAt: row.nextRunAt?.getTime() ?? null,
    lastRunAt: row.lastRunAt?.getTime() ?? null,
    lastStatus: row.lastStatus,
    consecutiveErrors: row.consecutiveErrors,
    disabledReason: row.disabledReason,
    createdBy: row.createdBy,
    createdAt: row.createdAt.getTime(),
  };
}

function toRun(row: RunRow): CronRun {
  return {
    id: row.id,
    jobId: row.jobId,
    agentId: row.agentId,
    status: row.status as CronRun["status"],
    scheduledFor: row.scheduledFor.getTime(),
    sessionKey: row.sessionKey,
    manual: row.manual === 1,
    dispatchedAt: row.dispatchedAt?.getTime() ?? null,
    finishedAt: row.finishedAt?.getTime() ?? null,
    model: row.model,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    costUsd: row.costUsd,
    summary: row.summary,
    error: row.error,
  };
}

/** The agent holds its most cron jobs (`cron.maxJobsPerAgent`) until one is removed. */
export class CronLimitError extends PermanentError {}

export async function createJob(
  db: Db,
  input: JobInput,
  opts: { agentId: string; createdBy: string; now: number; maxJobsPerAgent: number },
): Promise<CronJob> {
  const [count] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(cronJobs)
    .where(eq(cronJobs.agentId, opts.agentId));
  if ((count?.n ?? 0) >= opts.maxJobsPerAgent)
    throw new CronLimitError(
      `agent ${opts.agentId} already has ${count?.n} jobs (cron.maxJobsPerAgent)`,
    );
  const schedule = normalizeSchedule(input.schedule, opts.now);
  const enabled = input.enabled ?? true;
  const next = enabled ? firstDue(schedule, opts.now) : null;
  const [row] = await db
    .insert(cronJobs)
    .values({
      id: crypto.randomUUID(),
      agentId: opts.agentId,
      name: input.name,
      enabled: enabled ? 1 : 0,
      schedule,
      sessionTarget: input.sessionTarget ?? defaultTarget(input.payload),
      payload: input.payload,
      delivery: input.delivery ?? { mode: "none" },
      wakeMode: input.wakeMode ?? "next-heartbeat",
      deleteAfterRun: (input.deleteAfterRun ?? schedule.kind === "at") ? 1 : 0,
      nextRunAt: next === null ? null : new Date(next),
      createdBy: opts.createdBy,
      createdAt: new Date(opts.now),
      updatedAt: new Date(opts.now),
    })
    .returning();
  return toJob(row!);
}

export async function listJobs(db: Db, agentId?: string): Promise<CronJob[]> {
  const rows = await db
    .select()
    .from(cronJobs)
    .where(agentId ? eq(cronJobs.agentId, agentId) : undefined)
    .orderBy(asc(cronJobs.createdAt));
  return rows.map(toJob);
}

export async function getJob(db: Db, id: string): Promise<CronJob | undefined> {
  const [row] = await db.select().from(cronJobs).where(eq(cronJobs.id, id));
  return row ? toJob(row) : undefined;
}

export async function updateJob(
  db: Db,
  id: string,
  patch: JobPatch,
  now: number,
): Promise<CronJob | undefined> {
  const current = await getJob(db, id);
  if (!current) return undefined;
  const payload = patch.payload ?? current.payload;
  if (defaultTarget(payload) !== current.sessionTarget)
    throw new CronLimitError(
      `a ${current.sessionTarget} job cannot carry a ${payload.kind} payload`,
    );
  const schedule = patch.schedule ? normalizeSchedule(patch.schedule, now) : current.schedule;
  const enabled = patch.enabled ?? current.enabled;
  // A new schedule, or re-enabling, plans from now; otherwise the planned moment stands.
  const replan = patch.schedule !== undefined || (patch.enabled === true && !current.enabled);
  const next = !enabled ? null : replan ? firstDue(schedule, now) : current.nextRunAt;
  const [row] = await db
    .update(cronJobs)
    .set({
      name: patch.name ?? current.name,
      enabled: enabled ? 1 : 0,
      schedule,
      payload,
      delivery: patch.delivery ?? current.delivery,
      wakeMode: patch.wakeMode ?? current.wakeMode,
      deleteAfterRun: (patch.deleteAfterRun ?? current.deleteAfterRun) ? 1 : 0,
      nextRunAt: next === null ? null : new Date(next),
      // Enabling again (the recovery step after an auto-disable) clears the reason and the count.
      ...(enabled && !current.enabled ? { consecutiveErrors: 0, disabledReason: null } : {}),
      updatedAt: new Date(now),
    })
    .where(eq(cronJobs.id, id))
    .returning();
  return row ? toJob(row) : undefined;
}

export async function deleteJob(db: Db, id: string): Promise<boolean> {
  const rows = await db.delete(cronJobs).where(eq(cronJobs.id, id)).returning({ id: cronJobs.id });
  return rows.length > 0;
}

export async function listRuns(db: Db, jobId: string, limit: number): Promise<CronRun[]> {
  const rows = await db
    .select()
    .from(cronRuns)
    .where(eq(cronRuns.jobId, jobId))
    .orderBy(desc(cronRuns.createdAt))
    .limit(limit);
  return rows.map(toRun);
}

export async function getRun(db: Db, runId: string): Promise<CronRun | undefined> {
  const [row] = await db.select().from(cronRuns).where(eq(cronRuns.id, runId));
  return row ? toRun(row) : undefined;
}

/** The earliest moment any enabled job is due, or null: the scheduler's one alarm. */
export async function earliestDue(db: Db): Promise<number | null> {
  const [row] = await db
    .select({ at: min(cronJobs.nextRunAt) })
    .from(cronJobs)
    .where(and(eq(cronJobs.enabled, 1), isNotNull(cronJobs.nextRunAt)));
  const at = row?.at;
  return at ? new Date(at).getTime() : null;
}

export async function dueJobs(db: Db, now: number, limit: number): Promise<CronJob[]> {
  const rows = await db
    .select()
    .from(cronJobs)
    .where(and(eq(cronJobs.enabled, 1), lte(cronJobs.nextRunAt, new Date(now))))
    .orderBy(asc(cronJobs.nextRunAt))
    .limit(limit);
  return rows.map(toJob);
}

export function sessionKeyForJob(job: CronJob): string {
  return job.sessionTarget === "main"
    ? mainSessionKey(job.agentId)
    : isolatedSessionKey(job.agentId, job.id);
}

/**
 * Claims the firing of `job` due at `scheduledFor`: records its run (id derived from job and due
 * moment, so claiming again finds the same row) and moves the job to its next due moment — only
 * if the job still shows that moment, so two claims cannot both advance it. Returns the run id.
 */
export async function claimDueRun(db: Db, job: CronJob, now: number): Promise<string> {
  const scheduledFor = job.nextRunAt!;
  const runId = `${job.id}@${scheduledFor}`;
  await db
    .insert(cronRuns)
    .values({
      id: runId,
      jobId: job.id,
      agentId: job.agentId,
      status: "claimed",
      scheduledFor: new Date(scheduledFor),
      sessionKey: sessionKeyForJob(job),
      createdAt: new Date(now),
    })
    .onConflictDoNothing();
  const next = nextDueAfter(job.schedule, Math.max(now, scheduledFor));
  await db
    .update(cronJobs)
    .set({
      nextRunAt: next === null ? null : new Date(next),
      lastRunAt: new Date(now),
      updatedAt: new Date(now),
    })
    .where(and(eq(cronJobs.id, job.id), eq(cronJobs.nextRunAt, new Date(scheduledFor))));
  return runId;
}

/** A forced run (`cron run`, the tool's run action): its own id, outside the schedule. */
export async function claimManualRun(db: Db, job: CronJob, now: number): Promise<string> {
  const runId = `${job.id}@manual:${crypto.randomUUID()}`;
  await db.insert(cronRuns).values({
    id: runId,
    jobId: job.id,
    agentId: job.agentId,
    status: "claimed",
    scheduledFor: new Date(now),
    sessionKey: sessionKeyForJob(job),
    manual: 1,
    createdAt: new Date(now),
  });
  // "Last run" means any run, a forced one too; the schedule (nextRunAt) stays as it was.
  await db
    .update(cronJobs)
    .set({ lastRunAt: new Date(now), updatedAt: new Date(now) })
    .where(eq(cronJobs.id, job.id));
  return runId;
}

/** Runs claimed but not yet handed to their session (a crash came between): dispatched next. */
export async function claimedRuns(
  db: Db,
  limit: number,
): Promise<Array<{ run: CronRun; job: CronJob | undefined }>> {
  const rows = await db
    .select({ run: cronRuns, job: cronJobs })
    .from(cronRuns)
    .leftJoin(cronJobs, eq(cronJobs.id, cronRuns.jobId))
    .where(eq(cronRuns.status, "claimed"))
    .orderBy(asc(cronRuns.createdAt))
    .limit(limit);
  return rows.map((row) => ({ run: toRun(row.run), job: row.job ? toJob(row.job) : undefined }));
}

export async function markRun(
  db: Db,
  runId: string,
  patch: { status: CronRun["status"]; now: number; error?: string },
): Promise<void> {
  await db
    .update(cronRuns)
    .set({
      status: patch.status,
      ...(patch.status === "dispatched"
        ? { dispatchedAt: new Date(patch.now) }
        : { finishedAt: new Date(patch.now) }),
      ...(patch.error ? { error: patch.error } : {}),
    })
    .where(and(eq(cronRuns.id, runId), sql`${cronRuns.status} in ('claimed', 'dispatched')`));
}

/** What a session reports when a cron run ends (durable in the SessionDO until this succeeds). */
export interface CronRunReport {
  runId: string;
  jobId: string;
  status: "ok" | "error" | "skipped";
  finishedAt: number;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: string;
  summary: string | null;
  error: string | null;
  deleteAfterRun: boolean;
}

export const AUTO_DISABLED_CONSECUTIVE_FAILURES = "consecutive-failures";

/** What recording a run's end changed about its job. */
export interface RunResultEffect {
  /** The job was turned off just now after `cron.autoDisableAfterErrors` failures in a row. */
  autoDisabled?: { jobId: string; agentId: string; name: string; errors: number };
}

/**
 * Idempotent: a report sent twice writes the same values; deleteAfterRun removes the job after
 * success. The job's error streak moves only when the run row first becomes terminal (so a resent
 * report never counts twice): an error of a scheduled run adds one, a success resets it, a skipped
 * or manual run leaves it. A recurring job whose streak reaches `autoDisableAfterErrors` is
 * disabled (reason "consecutive-failures") until someone enables it again.
 */
export async function recordRunResult(
  db: Db,
  report: CronRunReport,
  historyLimit: number,
  autoDisableAfterErrors = 10,
): Promise<RunResultEffect> {
  const values = {
    status: report.status,
    finishedAt: new Date(report.finishedAt),
    model: report.model,
    inputTokens: report.inputTokens,
    outputTokens: report.outputTokens,
    costUsd: report.costUsd,
    summary: report.summary,
    error: report.error,
  };
  // One write that ends the run and tells whether this report is the first to end it.
  const [firstEnd] = await db
    .update(cronRuns)
    .set(values)
    .where(and(eq(cronRuns.id, report.runId), inArray(cronRuns.status, ["claimed", "dispatched"])))
    .returning({ manual: cronRuns.manual });
  if (!firstEnd) await db.update(cronRuns).set(values).where(eq(cronRuns.id, report.runId));
  await db.update(cronJobs).set({ lastStatus: report.status }).where(eq(cronJobs.id, report.jobId));
  const effect: RunResultEffect = {};
  if (firstEnd && firstEnd.manual !== 1 && report.status !== "skipped") {
    const streak = report.status === "ok" ? sql`0` : sql`${cronJobs.consecutiveErrors} + 1`;
    const [job] = await db
      .update(cronJobs)
      .set({ consecutiveErrors: streak })
      .where(eq(cronJobs.id, report.jobId))
      .returning();
    const recurring = job && (job.schedule as StoredSchedule).kind !== "at";
    if (
      job &&
      recurring &&
      job.enabled === 1 &&
      report.status === "error" &&
      job.consecutiveErrors >= autoDisableAfterErrors
    ) {
      await db
        .update(cronJobs)
        .set({ enabled: 0, nextRunAt: null, disabledReason: AUTO_DISABLED_CONSECUTIVE_FAILURES })
        .where(eq(cronJobs.id, job.id));
      effect.autoDisabled = {
        jobId: job.id,
        agentId: job.agentId,
        name: job.name,
        errors: job.consecutiveErrors,
      };
    }
  }
  if (report.status === "ok" && report.deleteAfterRun)
    await db.delete(cronJobs).where(eq(cronJobs.id, report.jobId));
  // Run history keeps the newest `historyLimit` terminal rows per job.
  await db.execute(sql`
    delete from cron_runs where job_id = ${report.jobId} and status in ('ok', 'error', 'skipped') and id not in (
      select id from cron_runs where job_id = ${report.jobId} and status in ('ok', 'error', 'skipped') order by created_at desc limit ${historyLimit}
    )`);
  return effect;
}
