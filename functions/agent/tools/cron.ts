import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { AgentTool } from "../types.ts";
import { withDb } from "../../db/client.ts";
import { jobInputSchema, jobPatchSchema, type CronJob } from "../../automation/cron-job.ts";
import {
  createJob,
  deleteJob,
  getJob,
  listJobs,
  listRuns,
  updateJob,
} from "../../automation/cron-store.ts";
import { describeSchedule } from "../../automation/schedule.ts";
import { dbEnvOf, parseToolArgs, ToolInputError } from "./common.ts";

/**
 * The `cron` tool (OpenClaw's automations tool; owner-only, in group:automation and the coding
 * profile): the agent lists, adds, changes, removes and runs its own scheduled jobs. Jobs of other
 * agents are invisible to it. The scheduler re-arms after every change.
 */
export interface CronScheduler {
  reschedule(): Promise<unknown>;
  runNow(jobId: string): Promise<{ ok: true; runId: string } | { ok: false; error: string }>;
}

const argsSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("list") }),
  z.object({ action: z.literal("get"), jobId: z.string().min(1) }),
  z.object({ action: z.literal("add"), job: z.record(z.string(), z.unknown()) }),
  z.object({
    action: z.literal("update"),
    jobId: z.string().min(1),
    patch: z.record(z.string(), z.unknown()),
  }),
  z.object({ action: z.literal("remove"), jobId: z.string().min(1) }),
  z.object({ action: z.literal("run"), jobId: z.string().min(1) }),
  z.object({
    action: z.literal("runs"),
    jobId: z.string().min(1),
    limit: z.number().int().positive().max(100).optional(),
  }),
]);

export function createCronTool(config: EdgeclawConfig, scheduler: CronScheduler): AgentTool {
  return {
    name: "cron",
    ownerOnly: true,
    description: [
      "Manage scheduled automations (cron jobs) of this agent. Actions: list, get, add, update, remove, run (now), runs (history).",
      'add takes job: { name, schedule: {kind:"cron",expr:"0 7 * * *",tz?} | {kind:"every",every:"1h"} | {kind:"at",at:"2026-01-02T09:00:00Z" or "20m"},',
      'payload: {kind:"systemEvent",text} (main session reminder) | {kind:"agentTurn",message,model?,timeoutSeconds?} (isolated run),',
      'delivery?: {mode:"announce",channel,to} | {mode:"none"}, wakeMode?: "now"|"next-heartbeat", deleteAfterRun? }.',
    ].join(" "),
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["list", "get", "add", "update", "remove", "run", "runs"] },
        jobId: { type: "string" },
        job: { type: "object" },
        patch: { type: "object" },
        limit: { type: "integer" },
      },
      required: ["action"],
      additionalProperties: false,
    },
    async execute(rawArgs, ctx) {
      const args = parseToolArgs("cron", argsSchema, rawArgs);
      const env = dbEnvOf(ctx);
      const own = async (jobId: string): Promise<CronJob> => {
        const job = await withDb(env, (db) => getJob(db, jobId));
        if (!job || job.agentId !== ctx.agentId) throw new ToolInputError(`cron: no job ${jobId}`);
        return job;
      };
      switch (args.action) {
        case "list": {
          const jobs = await withDb(env, (db) => listJobs(db, ctx.agentId));
          return { content: JSON.stringify({ jobs: jobs.map(summary) }, null, 2) };
        }
        case "get":
          return { content: JSON.stringify({ job: await own(args.jobId) }, null, 2) };
        case "add": {
          const input = parseToolArgs("cron", jobInputSchema, args.job);
          const job = await withDb(env, (db) =>
            createJob(
              db,
              { ...input, agentId: ctx.agentId },
              {
                agentId: ctx.agentId,
                createdBy: `agent:${ctx.agentId}`,
                now: Date.now(),
                maxJobsPerAgent: config.cron.maxJobsPerAgent,
              },
            ),
          );
          await scheduler.reschedule();
          return { content: JSON.stringify({ added: summary(job) }, null, 2) };
        }
        case "update": {
          await own(args.jobId);
          const patch = parseToolArgs("cron", jobPatchSchema, args.patch);
          const job = await withDb(env, (db) => updateJob(db, args.jobId, patch, Date.now()));
          await scheduler.reschedule();
          return { content: JSON.stringify({ updated: job ? summary(job) : null }, null, 2) };
        }
        case "remove": {
          await own(args.jobId);
          await withDb(env, (db) => deleteJob(db, args.jobId));
          await scheduler.reschedule();
          return { content: JSON.stringify({ removed: args.jobId }) };
        }
        case "run": {
          await own(args.jobId);
          const result = await scheduler.runNow(args.jobId);
          if (!result.ok) throw new ToolInputError(`cron: ${result.error}`);
          return { content: JSON.stringify({ started: result.runId }) };
        }
        case "runs": {
          await own(args.jobId);
          const runs = await withDb(env, (db) => listRuns(db, args.jobId, args.limit ?? 20));
          return {
            content: JSON.stringify(
              {
                runs: runs.map((run) => ({
                  id: run.id,
                  status: run.status,
                  scheduledFor: new Date(run.scheduledFor).toISOString(),
                  costUsd: run.costUsd,
                  summary: run.summary,
                  error: run.error,
                })),
              },
              null,
              2,
            ),
          };
        }
      }
    },
  };
}

/** OpenClaw's compact list entry: id, name, enabled, next run, schedule kind, last status. */
function summary(job: CronJob) {
  return {
    id: job.id,
    name: job.name,
    enabled: job.enabled,
    schedule: describeSchedule(job.schedule),
    scheduleKind: job.schedule.kind,
    sessionTarget: job.sessionTarget,
    nextRunAt: job.nextRunAt === null ? null : new Date(job.nextRunAt).toISOString(),
    lastRunStatus: job.lastStatus,
  };
}
