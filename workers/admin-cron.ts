import { Hono } from "hono";
import * as z from "zod";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { withDb } from "../functions/db/client.ts";
import { jobInputSchema, jobPatchSchema, type CronJob } from "../functions/automation/cron-job.ts";
import {
  CronLimitError,
  createJob,
  deleteJob,
  getJob,
  listJobs,
  listRuns,
  updateJob,
} from "../functions/automation/cron-store.ts";
import { ScheduleError } from "../functions/automation/schedule.ts";
import { defaultAgentId, knownAgentIds } from "../functions/routing/agents.ts";
import { schedulerStub } from "../durable-objects/scheduler-stub.ts";
import { systemEventFor } from "../durable-objects/scheduler/events.ts";
import type { Env } from "./env.ts";
import { auditAdminChange } from "./admin-audit-write.ts";
import { fail, readJson } from "./admin-http.ts";

/**
 * /admin/cron (mounted by workers/admin.ts behind the gateway token): list, add, update, remove,
 * run now, run history. Each change is written to Postgres and then the scheduler re-arms its one
 * alarm from what is stored. Every change and every manual run is audited (`cron.created`,
 * `cron.updated`, `cron.deleted`, `cron.run`; target = the job id) with what the job is — never its
 * payload text, which is a prompt.
 */
export const adminCron = new Hono<{ Bindings: Env }>();

/** What the audit trail keeps of a job: what it does and when, not what it says. */
function auditedJob(job: CronJob): Record<string, unknown> {
  return {
    agentId: job.agentId,
    name: job.name,
    enabled: job.enabled,
    schedule: job.schedule,
    sessionTarget: job.sessionTarget,
    payloadKind: job.payload.kind,
    delivery:
      job.delivery.mode === "announce"
        ? { mode: "announce", channel: job.delivery.channel }
        : { mode: job.delivery.mode },
  };
}

adminCron.onError((error, c) => {
  if (error instanceof ScheduleError || error instanceof CronLimitError)
    return fail(c, 400, "invalid_job", error.message);
  throw error;
});

adminCron.get("/", async (c) => {
  const agent = c.req.query("agent");
  const jobs = await withDb(c.env, (db) => listJobs(db, agent));
  return c.json({ jobs, scheduler: await schedulerStub(c.env).status() });
});

adminCron.post("/", async (c) => {
  const parsed = await readJson(c, jobInputSchema);
  if (!parsed.ok) return fail(c, 400, "invalid_job", parsed.message);
  const config = configFromEnv(c.env);
  const agentId = (parsed.value.agentId ?? defaultAgentId(config)).toLowerCase();
  if (!knownAgentIds(config).has(agentId))
    return fail(c, 400, "unknown_agent", `unknown agent "${agentId}"`);
  const job = await withDb(c.env, (db) =>
    createJob(db, parsed.value, {
      agentId,
      createdBy: "operator",
      now: Date.now(),
      maxJobsPerAgent: config.cron.maxJobsPerAgent,
    }),
  );
  await schedulerStub(c.env).reschedule();
  await auditAdminChange(c, { action: "cron.created", target: job.id, detail: auditedJob(job) });
  return c.json({ job }, 201);
});

adminCron.get("/:id", async (c) => {
  const job = await withDb(c.env, (db) => getJob(db, c.req.param("id")));
  return job ? c.json({ job }) : fail(c, 404, "not_found", `no job ${c.req.param("id")}`);
});

adminCron.patch("/:id", async (c) => {
  const parsed = await readJson(c, jobPatchSchema);
  if (!parsed.ok) return fail(c, 400, "invalid_job", parsed.message);
  const job = await withDb(c.env, (db) =>
    updateJob(db, c.req.param("id"), parsed.value, Date.now()),
  );
  if (!job) return fail(c, 404, "not_found", `no job ${c.req.param("id")}`);
  await schedulerStub(c.env).reschedule();
  await auditAdminChange(c, {
    action: "cron.updated",
    target: job.id,
    detail: { changed: Object.keys(parsed.value).sort(), job: auditedJob(job) },
  });
  return c.json({ job });
});

adminCron.delete("/:id", async (c) => {
  const id = c.req.param("id");
  const { job, removed } = await withDb(c.env, async (db) => {
    const job = await getJob(db, id);
    return { job, removed: job ? await deleteJob(db, id) : false };
  });
  if (!job || !removed) return fail(c, 404, "not_found", `no job ${id}`);
  await schedulerStub(c.env).reschedule();
  await auditAdminChange(c, { action: "cron.deleted", target: id, detail: auditedJob(job) });
  return c.json({ removed: true });
});

adminCron.post("/:id/run", async (c) => {
  const result = await schedulerStub(c.env).runNow(c.req.param("id"));
  if (!result.ok) return fail(c, 404, "not_found", result.error);
  await auditAdminChange(c, {
    action: "cron.run",
    target: c.req.param("id"),
    detail: { runId: result.runId },
  });
  return c.json({ runId: result.runId }, 202);
});

adminCron.get("/:id/runs", async (c) => {
  const limit = Math.min(500, Math.max(1, Number(c.req.query("limit") ?? 50) || 50));
  const runs = await withDb(c.env, (db) => listRuns(db, c.req.param("id"), limit));
  return c.json({ runs });
});

/**
 * /admin/system/event (`edgeclaw system event --text … [--mode now]`): a system event for an
 * agent's main session, optionally waking its heartbeat at once. Never a run by itself. Audited as
 * `system.event` (target = the session key; the text's length, never the text).
 */
export const adminSystem = new Hono<{ Bindings: Env }>();

const systemEventBody = z.object({
  text: z.string().min(1).max(4000),
  mode: z.enum(["now", "next-heartbeat"]).default("next-heartbeat"),
  agentId: z.string().max(64).optional(),
});

adminSystem.post("/event", async (c) => {
  const parsed = await readJson(c, systemEventBody);
  if (!parsed.ok) return fail(c, 400, "invalid_event", parsed.message);
  const config = configFromEnv(c.env);
  const agentId = (parsed.value.agentId ?? defaultAgentId(config)).toLowerCase();
  if (!knownAgentIds(config).has(agentId))
    return fail(c, 400, "unknown_agent", `unknown agent "${agentId}"`);
  const id = crypto.randomUUID();
  const event = systemEventFor(agentId, parsed.value.text, `system:${id}`, "cron", Date.now());
  await c.env.SESSIONS.get(c.env.SESSIONS.idFromName(event.sessionKey)).accept(event);
  const woke =
    parsed.value.mode === "now"
      ? await schedulerStub(c.env).wake(agentId, `system:${id}`)
      : undefined;
  await auditAdminChange(c, {
    action: "system.event",
    target: event.sessionKey,
    detail: {
      agentId,
      eventId: `system:${id}`,
      mode: parsed.value.mode,
      textChars: parsed.value.text.length,
    },
  });
  return c.json({
    ok: true,
    sessionKey: event.sessionKey,
    mode: parsed.value.mode,
    heartbeat: woke ?? null,
  });
});
