import * as z from "zod";
import type { StoredSchedule } from "./schedule.ts";

/**
 * A scheduled job as callers describe it (admin API, CLI, the agent's cron tool) and as it is
 * stored. Shapes follow OpenClaw's automations: a schedule (`at` / `every` / `cron` + tz), a session
 * target (`main`: a system event into the main session; `isolated`: its own run in `cron:<jobId>`),
 * one payload (`systemEvent` / `agentTurn`) and a delivery (`announce` to a channel target / `none`).
 */

export const scheduleInputSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("at"),
    at: z.string().min(1).max(64),
    tz: z.string().max(64).optional(),
  }),
  z.object({ kind: z.literal("every"), every: z.string().min(1).max(32) }),
  z.object({
    kind: z.literal("cron"),
    expr: z.string().min(1).max(128),
    tz: z.string().max(64).optional(),
  }),
]);

export const payloadSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("systemEvent"), text: z.string().min(1).max(4000) }),
  z.object({
    kind: z.literal("agentTurn"),
    message: z.string().min(1).max(20_000),
    model: z
      .string()
      .regex(/^[^/\s]+\/\S+$/, { message: 'expected "provider/model"' })
      .optional(),
    timeoutSeconds: z.number().int().positive().max(86_400).optional(),
  }),
]);
export type CronPayload = z.infer<typeof payloadSchema>;

export const deliverySchema = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("none") }),
  z.object({
    mode: z.literal("announce"),
    channel: z.string().min(1).max(64),
    to: z.string().min(1).max(256),
    accountId: z.string().min(1).max(64).optional(),
    threadId: z.string().min(1).max(128).optional(),
  }),
]);
export type CronDelivery = z.infer<typeof deliverySchema>;

const jobFields = {
  name: z.string().min(1).max(200),
  agentId: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i)
    .optional(),
  enabled: z.boolean().optional(),
  schedule: scheduleInputSchema,
  sessionTarget: z.enum(["main", "isolated"]).optional(),
  wakeMode: z.enum(["now", "next-heartbeat"]).optional(),
  payload: payloadSchema,
  delivery: deliverySchema.optional(),
  /** Default: true for one-shot `at` jobs (OpenClaw deletes them after success), else false. */
  deleteAfterRun: z.boolean().optional(),
};

export const jobInputSchema = z
  .object(jobFields)
  .strict()
  .superRefine((job, ctx) => {
    const target = job.sessionTarget ?? defaultTarget(job.payload);
    if (target === "main" && job.payload.kind !== "systemEvent")
      ctx.addIssue({
        code: "custom",
        path: ["payload"],
        message: "a main-session job carries a systemEvent payload",
      });
    if (target === "isolated" && job.payload.kind !== "agentTurn")
      ctx.addIssue({
        code: "custom",
        path: ["payload"],
        message: "an isolated job carries an agentTurn payload",
      });
    if (target === "main" && job.delivery?.mode === "announce")
      ctx.addIssue({
        code: "custom",
        path: ["delivery"],
        message: "announce delivery is for isolated jobs",
      });
  });
export type JobInput = z.infer<typeof jobInputSchema>;

export const jobPatchSchema = z
  .object({
    name: jobFields.name.optional(),
    enabled: z.boolean().optional(),
    schedule: scheduleInputSchema.optional(),
    wakeMode: jobFields.wakeMode,
    payload: payloadSchema.optional(),
    delivery: deliverySchema.optional(),
    deleteAfterRun: z.boolean().optional(),
  })
  .strict();
export type JobPatch = z.infer<typeof jobPatchSchema>;

export function defaultTarget(payload: CronPayload): "main" | "isolated" {
  return payload.kind === "systemEvent" ? "main" : "isolated";
}

/** A job as stored and listed. */
export interface CronJob {
  id: string;
  agentId: string;
  name: string;
  enabled: boolean;
  schedule: StoredSchedule;
  sessionTarget: "main" | "isolated";
  wakeMode: "now" | "next-heartbeat";
  payload: CronPayload;
  delivery: CronDelivery;
  deleteAfterRun: boolean;
  nextRunAt: number | null;
  lastRunAt: number | null;
  lastStatus: string | null;
  /** Scheduled runs that ended in error in a row (a success or re-enabling resets it). */
  consecutiveErrors: number;
  /** Set when the scheduler disabled the job ("consecutive-failures"); enabling clears it. */
  disabledReason: string | null;
  createdBy: string;
  createdAt: number;
}

export interface CronRun {
  id: string;
  jobId: string;
  agentId: string;
  status: "claimed" | "dispatched" | "ok" | "error" | "skipped";
  scheduledFor: number;
  sessionKey: string;
  manual: boolean;
  dispatchedAt: number | null;
  finishedAt: number | null;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: string;
  summary: string | null;
  error: string | null;
}

/** The isolated session of a job: one per job, a fresh transcript per run. */
export function isolatedSessionKey(agentId: string, jobId: string): string {
  return `agent:${agentId.toLowerCase()}:cron:${jobId}`;
}
