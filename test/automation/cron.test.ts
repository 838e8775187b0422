import { env, runInDurableObject, SELF } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { withDb } from "../../functions/db/client.ts";
import { cronJobs, cronRuns } from "../../functions/db/schema.ts";
import { claimDueRun, createJob, getJob, listRuns } from "../../functions/automation/cron-store.ts";
import type { CronJob, JobInput } from "../../functions/automation/cron-job.ts";
import { cronRunEvent } from "../../durable-objects/scheduler/events.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import type { SchedulerDO } from "../../durable-objects/scheduler.ts";
import { newScenario, script, recorded } from "../agent/model-helpers.ts";
import { collectRunEvents, waitFor, webchatEvent } from "../durable-objects/helpers.ts";
import type { Env } from "../../workers/env.ts";

/**
 * The scheduler in workerd against Postgres: one alarm for the earliest job, none when nothing is
 * scheduled, exactly one run per due moment whatever the alarm does (fires twice, dies between
 * claim and hand-over), isolated runs announced to Slack, one-shots deleted after success, history.
 */
const testEnv = env as unknown as Env;
const scheduler = () => testEnv.SCHEDULER.get(testEnv.SCHEDULER.idFromName("global"));
const AUTH = { authorization: "Bearer test-gateway-token", "content-type": "application/json" };
const created: string[] = [];

afterEach(async () => {
  await withDb(testEnv, async (db) => {
    for (const id of created.splice(0)) await db.delete(cronJobs).where(eq(cronJobs.id, id));
  });
  await scheduler().reschedule();
});

async function addJob(input: JobInput, now = Date.now()): Promise<CronJob> {
  const job = await withDb(testEnv, (db) =>
    createJob(db, input, { agentId: "main", createdBy: "test", now, maxJobsPerAgent: 200 }),
  );
  created.push(job.id);
  return job;
}

/** Makes a stored job due a moment ago without telling the scheduler (its alarm stays where it was). */
async function makeDue(jobId: string): Promise<void> {
  await withDb(testEnv, (db) =>
    db
      .update(cronJobs)
      .set({ nextRunAt: new Date(Date.now() - 1000) })
      .where(eq(cronJobs.id, jobId)),
  );
}

async function runsOf(jobId: string) {
  return withDb(testEnv, (db) => listRuns(db, jobId, 50));
}

async function finishedRuns(jobId: string, count = 1) {
  return waitFor(
    async () => {
      const runs = await runsOf(jobId);
      return (
        runs.filter((run) => run.status === "ok" || run.status === "error").length >= count && runs
      );
    },
    20_000,
    `cron run of ${jobId} to finish`,
  );
}

async function fireAlarm(times: number): Promise<void> {
  await runInDurableObject(scheduler(), async (instance: SchedulerDO) => {
    await Promise.all(Array.from({ length: times }, () => instance.alarm()));
  });
}

describe("scheduler", () => {
  it("holds no alarm when nothing is scheduled, and one alarm for the earliest job", async () => {
    await withDb(testEnv, (db) =>
      db.execute(sql`update cron_jobs set enabled = 0 where created_by = 'test'`),
    );
    const idle = await scheduler().reschedule();
    expect(idle.nextAlarmAt).toBeNull();
    // No owner DM in the suite's config: the default heartbeat has no route, so nothing is armed for it.
    expect(await scheduler().status()).toEqual({ alarmAt: null, beats: {} });

    const later = await addJob({
      name: "later",
      schedule: { kind: "every", every: "2h" },
      payload: { kind: "agentTurn", message: "later" },
    });
    const sooner = await addJob({
      name: "sooner",
      schedule: { kind: "every", every: "1h" },
      payload: { kind: "agentTurn", message: "sooner" },
    });
    const planned = await scheduler().reschedule();
    expect(planned.nextAlarmAt).toBe(sooner.nextRunAt);
    expect(planned.nextAlarmAt).toBeLessThan(later.nextRunAt!);
    expect((await scheduler().status()).alarmAt).toBe(sooner.nextRunAt);
  });

  it("an alarm that fires twice at once runs the due job once", async () => {
    const scenario = newScenario("cron-double");
    await script(scenario, [{ type: "text", text: "double-alarm report" }]);
    const job = await addJob({
      name: "double",
      schedule: { kind: "every", every: "1h" },
      payload: { kind: "agentTurn", message: `Report [scenario:${scenario}]` },
    });
    await makeDue(job.id);
    await fireAlarm(2);
    await fireAlarm(1);
    const runs = await finishedRuns(job.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "ok", summary: "double-alarm report" });
    expect(await recorded(scenario)).toHaveLength(1);
    // The job moved on to its next hour.
    expect((await withDb(testEnv, (db) => getJob(db, job.id)))!.nextRunAt).toBeGreaterThan(
      Date.now() + 50 * 60_000,
    );
  });

  it("a crash between claim and hand-over, or after the hand-over, still gives exactly one run", async () => {
    const scenario = newScenario("cron-crash");
    await script(scenario, [{ type: "text", text: "after the crash" }]);
    const job = await addJob({
      name: "crash",
      schedule: { kind: "every", every: "1h" },
      payload: { kind: "agentTurn", message: `Crash [scenario:${scenario}]` },
    });
    await makeDue(job.id);
    // The alarm claimed the run, then died before handing it to the session.
    const due = (await withDb(testEnv, (db) => getJob(db, job.id)))!;
    const runId = await withDb(testEnv, (db) => claimDueRun(db, due, Date.now()));
    // …or it handed it over and died before recording that.
    const [run] = await runsOf(job.id);
    await testEnv.SESSIONS.get(testEnv.SESSIONS.idFromName(run!.sessionKey)).accept(
      cronRunEvent(due, run!, 3600, Date.now()),
    );
    // The platform retries the alarm: the claimed run is handed over again (stored once), the job is not due again.
    await fireAlarm(1);
    await fireAlarm(1);
    const runs = await finishedRuns(job.id);
    expect(runs.map((r) => r.id)).toEqual([runId]);
    expect(await recorded(scenario)).toHaveLength(1);
  });

  it("a one-shot due in the past fires once when the scheduler next wakes, announces to Slack, and is deleted after success", async () => {
    const scenario = newScenario("cron-announce");
    await script(scenario, [
      {
        type: "text",
        text: "Morning brief: all systems nominal.",
        usage: { input: 1000, output: 200 },
      },
    ]);
    const channel = `C0CRON${crypto.randomUUID().slice(0, 6).toUpperCase()}`;
    const job = await addJob({
      name: "brief",
      schedule: { kind: "at", at: new Date(Date.now() - 60_000).toISOString() },
      payload: { kind: "agentTurn", message: `Brief me [scenario:${scenario}]` },
      delivery: { mode: "announce", channel: "slack", to: channel },
    });
    expect(job.deleteAfterRun).toBe(true);
    await scheduler().reschedule();
    const [run] = await finishedRuns(job.id);
    expect(run).toMatchObject({
      status: "ok",
      model: "fakeanthropic/claude-test",
      inputTokens: 1000,
      outputTokens: 200,
    });
    expect(Number(run!.costUsd)).toBeCloseTo((1000 * 3 + 200 * 15) / 1e6, 6);
    const posted = await waitFor(
      async () => {
        const res = await fetch(`${testEnv.FAKE_SLACK_URL}/_control/messages?channel=${channel}`);
        const messages = (await res.json()) as Array<{ text: string }>;
        return messages.some((m) => m.text.includes("Morning brief")) && messages;
      },
      10_000,
      "the announcement in Slack",
    );
    expect(posted.filter((m) => m.text.includes("Morning brief"))).toHaveLength(1);
    expect(
      await waitFor(
        async () => (await withDb(testEnv, (db) => getJob(db, job.id))) === undefined,
        10_000,
        "the job to be deleted",
      ),
    ).toBe(true);
    // History outlives the job.
    expect(await runsOf(job.id)).toHaveLength(1);
  });

  it("a main-session job queues a system event and starts no run by itself", async () => {
    const job = await addJob({
      name: "remind",
      schedule: { kind: "every", every: "1h" },
      payload: { kind: "systemEvent", text: "Reminder: check the calendar" },
    });
    expect(job.sessionTarget).toBe("main");
    await makeDue(job.id);
    await fireAlarm(1);
    const [run] = await waitFor(
      async () => {
        const runs = await runsOf(job.id);
        return runs[0]?.status === "ok" && runs;
      },
      10_000,
      "the system event to be queued",
    );
    expect(run!.sessionKey).toBe("agent:main:main");
    const queued = await runInDurableObject(
      testEnv.SESSIONS.get(testEnv.SESSIONS.idFromName("agent:main:main")),
      async (_i, state) => {
        const store = new SessionStore(state.storage.sql);
        const events = store.meta.getJson("systemEvents") ?? [];
        // Leave agent:main:main as other files expect it.
        store.meta.setJson(
          "systemEvents",
          events.filter((e) => e.text !== "Reminder: check the calendar"),
        );
        return { events, runs: store.inbox.byKey(`cron:${run!.id}`)?.runId ?? null };
      },
    );
    expect(queued.events.map((e) => e.text)).toContain("Reminder: check the calendar");
    expect(queued.runs).toBeNull();
  });
});

describe("/admin/cron", () => {
  it("adds, lists, runs, shows history and removes a job; refuses bad schedules and strangers", async () => {
    const stranger = await SELF.fetch("http://gw/admin/cron", {
      headers: { authorization: "Bearer wrong" },
    });
    expect(stranger.status).toBe(401);
    const bad = await SELF.fetch("http://gw/admin/cron", {
      method: "POST",
      headers: AUTH,
      body: JSON.stringify({
        name: "x",
        schedule: { kind: "cron", expr: "99 * * * *" },
        payload: { kind: "agentTurn", message: "x" },
      }),
    });
    expect(bad.status).toBe(400);
    const scenario = newScenario("cron-admin");
    await script(scenario, [{ type: "text", text: "manual run done" }]);
    const add = await SELF.fetch("http://gw/admin/cron", {
      method: "POST",
      headers: AUTH,
      body: JSON.stringify({
        name: "weekly",
        schedule: { kind: "cron", expr: "0 6 * * 1", tz: "America/Los_Angeles" },
        payload: {
          kind: "agentTurn",
          message: `Weekly [scenario:${scenario}]`,
          timeoutSeconds: 120,
        },
      }),
    });
    expect(add.status).toBe(201);
    const { job } = (await add.json()) as { job: CronJob };
    created.push(job.id);
    const list = (await (await SELF.fetch("http://gw/admin/cron", { headers: AUTH })).json()) as {
      jobs: CronJob[];
    };
    expect(list.jobs.map((j) => j.id)).toContain(job.id);
    const run = await SELF.fetch(`http://gw/admin/cron/${job.id}/run`, {
      method: "POST",
      headers: AUTH,
    });
    expect(run.status).toBe(202);
    const [finished] = await finishedRuns(job.id);
    expect(finished).toMatchObject({ status: "ok", manual: true, summary: "manual run done" });
    const history = (await (
      await SELF.fetch(`http://gw/admin/cron/${job.id}/runs`, { headers: AUTH })
    ).json()) as { runs: unknown[] };
    expect(history.runs).toHaveLength(1);
    // The forced run is the job's last run (the control page's "Last run"); its schedule stays.
    const after = (await (
      await SELF.fetch(`http://gw/admin/cron/${job.id}`, { headers: AUTH })
    ).json()) as { job: CronJob };
    expect(after.job.lastRunAt).toBeGreaterThanOrEqual(job.createdAt);
    expect(after.job.lastStatus).toBe("ok");
    expect(after.job.nextRunAt).toBe(job.nextRunAt);
    expect(
      (await SELF.fetch(`http://gw/admin/cron/${job.id}`, { method: "DELETE", headers: AUTH }))
        .status,
    ).toBe(200);
    expect((await SELF.fetch(`http://gw/admin/cron/${job.id}`, { headers: AUTH })).status).toBe(
      404,
    );
    // Nothing left runs for it; the record of the run it had stays.
    expect(
      await withDb(testEnv, (db) => db.select().from(cronRuns).where(eq(cronRuns.jobId, job.id))),
    ).toHaveLength(1);
  });
});

describe("the cron tool", () => {
  it("the owner's agent adds a job for itself through the tool, and the scheduler arms for it", async () => {
    const scenario = newScenario("cron-tool");
    const name = `tool-job-${scenario}`;
    await script(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            name: "cron",
            arguments: {
              action: "add",
              job: {
                name,
                schedule: { kind: "every", every: "3h" },
                payload: { kind: "agentTurn", message: "check the queue" },
              },
            },
          },
        ],
      },
      { type: "text", text: "Scheduled." },
    ]);
    const sessionKey = `agent:main:crontool-${crypto.randomUUID().slice(0, 8)}`;
    const events = await collectRunEvents(
      await testEnv.SESSIONS.get(testEnv.SESSIONS.idFromName(sessionKey)).chat(
        webchatEvent(sessionKey, `Check the queue every 3 hours [scenario:${scenario}]`),
      ),
    );
    expect(events.at(-1)).toMatchObject({ type: "done", text: "Scheduled." });
    const [job] = await withDb(testEnv, (db) =>
      db.select().from(cronJobs).where(eq(cronJobs.name, name)),
    );
    expect(job).toMatchObject({
      agentId: "main",
      createdBy: "agent:main",
      sessionTarget: "isolated",
    });
    created.push(job!.id);
    const requests = await recorded(scenario);
    const toolResult = JSON.stringify(requests[1]!.body.messages);
    expect(toolResult).toContain(job!.id);
    expect((await scheduler().status()).alarmAt).toBeLessThanOrEqual(job!.nextRunAt!.getTime());
  });
});
