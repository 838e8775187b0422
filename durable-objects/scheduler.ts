import { DurableObject } from "cloudflare:workers";
import type { Env } from "./env.ts";
import type { BeatState, SchedulerRpc } from "./rpc.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { withDb, isPostgresUnavailable } from "../functions/db/client.ts";
import {
  claimDueRun,
  claimManualRun,
  claimedRuns,
  dueJobs,
  earliestDue,
  getJob,
  markRun,
  recordRunResult,
} from "../functions/automation/cron-store.ts";
import type { CronJob, CronRun } from "../functions/automation/cron-job.ts";
import {
  resolveHeartbeats,
  withinActiveHours,
  type HeartbeatPlan,
} from "../functions/automation/heartbeat.ts";
import { cronRunEvent, heartbeatEvent } from "./scheduler/events.ts";
import type { RoutedEvent } from "./session-api.ts";

/**
 * The one scheduler (one object, named "global"): cron jobs live in Postgres, heartbeats in the
 * config; this object keeps ONE alarm, for the earliest moment anything is due, and none at all
 * when nothing is scheduled (an idle deployment costs nothing). Every change to the jobs ends with
 * `reschedule()`; every alarm ends by re-arming from what is stored.
 *
 * Firing is at-least-once, running exactly-once: a due job is first claimed in Postgres (a run row
 * whose id is the job and its due moment, and the job moved on to its next moment), then handed to
 * its session, whose inbox is idempotent by that run id. A retried alarm finds nothing due; a crash
 * between claim and hand-over leaves a "claimed" row that the next alarm hands over.
 */

const BEATS_KEY = "beats";
const FAILURES_KEY = "failures";
const CONFIG_KEY = "configFingerprint";
/** Jobs handled per alarm; more due ones make the next alarm immediate. */
const BATCH = 50;
const BACKOFF_MS = [5_000, 15_000, 60_000, 300_000];

export const SCHEDULER_NAME = "global";

export class SchedulerDO extends DurableObject<Env> implements SchedulerRpc {
  /** Re-plans the alarm (and the heartbeats, from the config) after jobs changed. */
  async reschedule(): Promise<{ nextAlarmAt: number | null }> {
    await this.syncBeats(Date.now());
    return { nextAlarmAt: await this.arm() };
  }

  /**
   * The deployed config changed (a deploy is the only way it changes): re-plan the heartbeats and
   * the alarm. The Worker asks once per isolate; an unchanged config costs one storage read.
   */
  async ensureConfig(): Promise<void> {
    const fingerprint = await sha256(String(this.env.EDGECLAW_CONFIG ?? ""));
    if ((await this.ctx.storage.get<string>(CONFIG_KEY)) === fingerprint) return;
    await this.reschedule();
    await this.ctx.storage.put(CONFIG_KEY, fingerprint);
  }

  /** `cron run <id>`: one run now, outside the schedule. */
  async runNow(jobId: string): Promise<{ ok: true; runId: string } | { ok: false; error: string }> {
    const now = Date.now();
    const result = await withDb(this.env, async (db) => {
      const job = await getJob(db, jobId);
      if (!job) return { ok: false as const, error: `no job ${jobId}` };
      const runId = await claimManualRun(db, job, now);
      return { ok: true as const, runId, job };
    });
    if (!result.ok) return result;
    await this.dispatchClaimed(now);
    await this.arm();
    return { ok: true, runId: result.runId };
  }

  /** `system event --mode now`, a hook's wake, a cron job's `wakeMode: "now"`: a beat at once. */
  async wake(agentId: string, key: string): Promise<{ ok: boolean; reason?: string }> {
    const plan = this.plans().find((candidate) => candidate.agentId === agentId);
    if (!plan) return { ok: false, reason: "no heartbeat for this agent (disabled or no route)" };
    await this.handOver(heartbeatEvent(plan, `wake:${key}`, "wake", Date.now()));
    return { ok: true };
  }

  /** What is planned, for `cron status` and the idle-cost figures. */
  async status(): Promise<{ alarmAt: number | null; beats: Record<string, BeatState> }> {
    return {
      alarmAt: await this.ctx.storage.getAlarm(),
      beats: (await this.ctx.storage.get<Record<string, BeatState>>(BEATS_KEY)) ?? {},
    };
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    try {
      if (configFromEnv(this.env).cron.enabled && this.env.DATABASE_URL) {
        await withDb(this.env, async (db) => {
          for (const job of await dueJobs(db, now, BATCH)) await claimDueRun(db, job, now);
        });
        await this.dispatchClaimed(now);
      }
      if (configFromEnv(this.env).cron.enabled) await this.beat(now);
      await this.ctx.storage.delete(FAILURES_KEY);
    } catch (error) {
      // Postgres down or a session unreachable: nothing claimed is lost (it stays "claimed" or
      // due); try again with bounded backoff instead of the platform's blind alarm retries.
      const failures = ((await this.ctx.storage.get<number>(FAILURES_KEY)) ?? 0) + 1;
      await this.ctx.storage.put(FAILURES_KEY, failures);
      if (!isPostgresUnavailable(error))
        console.error(
          `scheduler alarm failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      await this.ctx.storage.setAlarm(now + BACKOFF_MS[Math.min(failures, BACKOFF_MS.length) - 1]!);
      return;
    }
    await this.arm();
  }

  // ---- cron ----------------------------------------------------------------------------------

  /** Hands every claimed run to its session (idempotent there), then records the hand-over. */
  private async dispatchClaimed(now: number): Promise<void> {
    const { cron } = configFromEnv(this.env);
    const pending = await withDb(this.env, (db) => claimedRuns(db, BATCH));
    for (const { run, job } of pending) {
      if (!job) {
        await withDb(this.env, (db) =>
          markRun(db, run.id, { status: "skipped", now, error: "job removed before it ran" }),
        );
        continue;
      }
      await this.handOver(cronRunEvent(job, run, cron.isolatedTimeoutSeconds, now));
      await withDb(this.env, (db) => this.afterHandOver(db, job, run, now));
      if (job.sessionTarget === "main" && job.wakeMode === "now")
        await this.wake(job.agentId, run.id);
    }
  }

  private async afterHandOver(
    db: Parameters<Parameters<typeof withDb>[1]>[0],
    job: CronJob,
    run: CronRun,
    now: number,
  ): Promise<void> {
    if (job.payload.kind === "systemEvent") {
      // Delivered = queued in the main session; nothing more will report on it.
      await recordRunResult(
        db,
        {
          runId: run.id,
          jobId: job.id,
          status: "ok",
          finishedAt: now,
          model: null,
          inputTokens: 0,
          outputTokens: 0,
          costUsd: "0",
          summary: "system event queued",
          error: null,
          deleteAfterRun: job.deleteAfterRun,
        },
        configFromEnv(this.env).cron.runHistoryLimit,
        configFromEnv(this.env).cron.autoDisableAfterErrors,
      );
    } else {
      await markRun(db, run.id, { status: "dispatched", now });
    }
  }

  private async handOver(event: RoutedEvent): Promise<void> {
    await this.env.SESSIONS.get(this.env.SESSIONS.idFromName(event.sessionKey)).accept(event);
  }

  // ---- heartbeat -----------------------------------------------------------------------------

  private plans(): HeartbeatPlan[] {
    return resolveHeartbeats(configFromEnv(this.env)).flatMap((resolution) =>
      resolution.ok ? [resolution.plan] : [],
    );
  }

  /** Brings the stored beats in line with the config: new agents start one interval from now. */
  private async syncBeats(now: number): Promise<void> {
    const stored = (await this.ctx.storage.get<Record<string, BeatState>>(BEATS_KEY)) ?? {};
    const beats: Record<string, BeatState> = {};
    for (const plan of this.plans()) {
      const previous = stored[plan.agentId];
      beats[plan.agentId] =
        previous && previous.everyMs === plan.everyMs
          ? previous
          : { everyMs: plan.everyMs, nextAt: now + plan.everyMs };
    }
    if (Object.keys(beats).length) await this.ctx.storage.put(BEATS_KEY, beats);
    else await this.ctx.storage.delete(BEATS_KEY);
  }

  /** Sends the beats that are due (inside active hours) and moves each to its next moment. */
  private async beat(now: number): Promise<void> {
    await this.syncBeats(now);
    const beats = (await this.ctx.storage.get<Record<string, BeatState>>(BEATS_KEY)) ?? {};
    const config = configFromEnv(this.env);
    for (const plan of this.plans()) {
      const state = beats[plan.agentId];
      if (!state || state.nextAt > now) continue;
      // Outside active hours the beat is skipped until the next tick inside the window.
      if (withinActiveHours(plan.activeHours, now, config.agents.defaults.userTimezone)) {
        await this.handOver(heartbeatEvent(plan, String(state.nextAt), "interval", now));
      }
      const next = state.nextAt + state.everyMs;
      beats[plan.agentId] = { ...state, nextAt: next > now ? next : now + state.everyMs };
      await this.ctx.storage.put(BEATS_KEY, beats);
    }
  }

  // ---- the one alarm -------------------------------------------------------------------------

  /** Arms the alarm for the earliest due job or beat; deletes it when nothing is scheduled. */
  private async arm(): Promise<number | null> {
    const config = configFromEnv(this.env);
    const due: number[] = [];
    if (config.cron.enabled && this.env.DATABASE_URL) {
      const jobAt = await withDb(this.env, (db) => earliestDue(db));
      if (jobAt !== null) due.push(jobAt);
      const stuck = await withDb(this.env, (db) => claimedRuns(db, 1));
      if (stuck.length) due.push(Date.now() + BACKOFF_MS[0]!);
    }
    if (config.cron.enabled) {
      const beats = (await this.ctx.storage.get<Record<string, BeatState>>(BEATS_KEY)) ?? {};
      for (const state of Object.values(beats)) due.push(state.nextAt);
    }
    if (!due.length) {
      await this.ctx.storage.deleteAlarm();
      return null;
    }
    const at = Math.max(Date.now(), Math.min(...due));
    await this.ctx.storage.setAlarm(at);
    return at;
  }
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
