import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { withDb } from "../../functions/db/client.ts";
import { cronJobs } from "../../functions/db/schema.ts";
import {
  claimDueRun,
  claimManualRun,
  createJob,
  getJob,
  recordRunResult,
  updateJob,
  type CronRunReport,
} from "../../functions/automation/cron-store.ts";
import type { CronJob } from "../../functions/automation/cron-job.ts";
import type { Env } from "../../workers/env.ts";

/**
 * OpenClaw's safety net for recurring jobs (automation/cron-jobs): after 10 scheduled runs fail in
 * a row the job is disabled with reason "consecutive-failures"; a success resets the streak;
 * enabling the job again clears the reason and the count. Against Postgres in workerd, through the
 * same claim → report path the scheduler and the sessions use.
 */
const testEnv = env as unknown as Env;
const created: string[] = [];
let moment = Date.now() - 3_600_000;

afterEach(async () => {
  await withDb(testEnv, async (db) => {
    for (const id of created.splice(0)) await db.delete(cronJobs).where(eq(cronJobs.id, id));
  });
});

async function addRecurringJob(): Promise<CronJob> {
  const job = await withDb(testEnv, (db) =>
    createJob(
      db,
      {
        name: "flaky",
        schedule: { kind: "every", every: "1h" },
        payload: { kind: "agentTurn", message: "check" },
      },
      { agentId: "main", createdBy: "test", now: Date.now(), maxJobsPerAgent: 200 },
    ),
  );
  created.push(job.id);
  return job;
}

function report(job: CronJob, runId: string, status: CronRunReport["status"]): CronRunReport {
  return {
    runId,
    jobId: job.id,
    status,
    finishedAt: Date.now(),
    model: null,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: "0",
    summary: null,
    error: status === "error" ? "model failed" : null,
    deleteAfterRun: false,
  };
}

/** One scheduled firing of `job` (made due at a fresh moment), ended with `status`; returns the run id and what recording it changed. */
async function scheduledRun(job: CronJob, status: CronRunReport["status"]) {
  return withDb(testEnv, async (db) => {
    moment += 1000;
    await db
      .update(cronJobs)
      .set({ nextRunAt: new Date(moment) })
      .where(eq(cronJobs.id, job.id));
    const runId = await claimDueRun(db, (await getJob(db, job.id))!, moment);
    const effect = await recordRunResult(db, report(job, runId, status), 2000, 10);
    return { runId, effect };
  });
}

const stored = (id: string) => withDb(testEnv, (db) => getJob(db, id));

describe("cron auto-disable after consecutive failures", () => {
  it("disables a recurring job on its 10th failed run in a row, once, and says why", async () => {
    const job = await addRecurringJob();
    for (let i = 1; i <= 9; i++) {
      const { effect } = await scheduledRun(job, "error");
      expect(effect.autoDisabled).toBeUndefined();
    }
    expect(await stored(job.id)).toMatchObject({
      enabled: true,
      consecutiveErrors: 9,
      disabledReason: null,
    });
    const { runId, effect } = await scheduledRun(job, "error");
    expect(effect.autoDisabled).toEqual({
      jobId: job.id,
      agentId: "main",
      name: "flaky",
      errors: 10,
    });
    expect(await stored(job.id)).toMatchObject({
      enabled: false,
      nextRunAt: null,
      disabledReason: "consecutive-failures",
      consecutiveErrors: 10,
    });
    // The same report again (a session retrying its flush) changes nothing and reports nothing.
    const again = await withDb(testEnv, (db) =>
      recordRunResult(db, report(job, runId, "error"), 2000, 10),
    );
    expect(again.autoDisabled).toBeUndefined();
    expect((await stored(job.id))!.consecutiveErrors).toBe(10);
  });

  it("a success resets the streak; resent reports, skipped and manual runs do not move it", async () => {
    const job = await addRecurringJob();
    for (let i = 0; i < 9; i++) await scheduledRun(job, "error");
    await scheduledRun(job, "ok");
    expect((await stored(job.id))!.consecutiveErrors).toBe(0);
    const { runId } = await scheduledRun(job, "error");
    await withDb(testEnv, (db) => recordRunResult(db, report(job, runId, "error"), 2000, 10));
    await scheduledRun(job, "skipped");
    for (let i = 0; i < 12; i++) {
      await withDb(testEnv, async (db) => {
        const manual = await claimManualRun(db, (await getJob(db, job.id))!, Date.now() + i);
        await recordRunResult(db, report(job, manual, "error"), 2000, 10);
      });
    }
    expect(await stored(job.id)).toMatchObject({ enabled: true, consecutiveErrors: 1 });
  });

  it("enabling the job again clears the reason and the count and plans its next run", async () => {
    const job = await addRecurringJob();
    for (let i = 0; i < 10; i++) await scheduledRun(job, "error");
    expect((await stored(job.id))!.enabled).toBe(false);
    const now = Date.now();
    const enabled = await withDb(testEnv, (db) => updateJob(db, job.id, { enabled: true }, now));
    expect(enabled).toMatchObject({ enabled: true, consecutiveErrors: 0, disabledReason: null });
    expect(enabled!.nextRunAt).toBeGreaterThan(now);
    // One more failure is one, not eleven.
    expect((await scheduledRun(job, "error")).effect.autoDisabled).toBeUndefined();
    expect((await stored(job.id))!.consecutiveErrors).toBe(1);
  });
});
