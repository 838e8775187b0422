import * as z from "zod";
import { secretInputSchema } from "./secret-ref.ts";

/**
 * Config for what wakes the agent besides a message: `cron.*` (the scheduler), the heartbeat
 * (`agents.defaults.heartbeat`, `agents.list[].heartbeat`) and inbound hooks (`hooks.*`), with
 * OpenClaw's key names and defaults (automation/cron-jobs, gateway/heartbeat, gateway/configuration).
 */

/** OpenClaw's verbatim default heartbeat prompt (gateway/heartbeat "Defaults"). */
export const DEFAULT_HEARTBEAT_PROMPT =
  "Follow the heartbeat monitor scratch context when provided. Recurring tasks are automations; create or change their schedules with the automations tool, not heartbeat scratch. Do not infer or repeat old tasks from prior chats. If nothing needs attention, reply HEARTBEAT_OK.";

/** "30m", "1h", "45s", "2d"; a bare number is minutes (heartbeat `every`: "default unit = minutes"). */
export const durationText = z.string().regex(/^\s*\d+(\.\d+)?\s*(ms|s|m|h|d)?\s*$/i, {
  message: 'expected a duration such as "30m", "1h" or "10s"',
});

const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, {
  message: 'expected "HH:MM" (24:00 allowed as an end)',
});

/** Fields one heartbeat block may set; `agents.list[].heartbeat` merges over the defaults. */
const heartbeatFields = {
  /** Interval; "0m" disables. */
  every: durationText.optional(),
  model: z
    .string()
    .regex(/^[^/\s]+\/\S+$/, { message: 'expected "provider/model"' })
    .optional(),
  prompt: z.string().min(1).optional(),
  /** owner (default) | last | none | a channel id (with `to`). */
  target: z.string().min(1).optional(),
  to: z.string().min(1).optional(),
  accountId: z.string().min(1).optional(),
  /** Replies of at most this many characters besides HEARTBEAT_OK are dropped (OpenClaw: 300). */
  ackMaxChars: z.number().int().nonnegative().optional(),
  timeoutSeconds: z.number().int().positive().optional(),
  activeHours: z
    .object({
      start: hhmm,
      end: hhmm,
      /** "user" (agents.defaults.userTimezone), "local" (the host: UTC on Workers) or an IANA zone. */
      timezone: z.string().min(1).optional(),
    })
    .optional(),
  directPolicy: z.enum(["allow", "block"]).optional(),
};

export const heartbeatOverrideSchema = z.object(heartbeatFields).loose();
export type HeartbeatOverride = z.infer<typeof heartbeatOverrideSchema>;

export const heartbeatDefaultsSchema = z
  .object({
    ...heartbeatFields,
    every: durationText.default("30m"),
    prompt: z.string().min(1).default(DEFAULT_HEARTBEAT_PROMPT),
    target: z.string().min(1).default("owner"),
    ackMaxChars: z.number().int().nonnegative().default(300),
    directPolicy: z.enum(["allow", "block"]).default("allow"),
  })
  .loose()
  .prefault({});

export const cronSchema = z
  .object({
    /** false: no scheduled job (and no heartbeat) fires; jobs stay stored. */
    enabled: z.boolean().default(true),
    /** Terminal run-history rows kept per job. */
    runHistoryLimit: z.number().int().positive().default(2000),
    /** Wall-time budget of an isolated agent turn without its own timeoutSeconds (the scheduler's 60-minute watchdog). */
    isolatedTimeoutSeconds: z.number().int().positive().default(3600),
    /** edgeclaw's own: jobs one agent may hold (a runaway agent cannot fill the table). */
    maxJobsPerAgent: z.number().int().positive().default(200),
    /** A recurring job is disabled after this many scheduled runs fail in a row (OpenClaw's fixed 10). */
    autoDisableAfterErrors: z.number().int().positive().default(10),
  })
  .loose()
  .prefault({});

const hookMappingSchema = z
  .object({
    id: z.string().optional(),
    match: z
      .object({
        path: z
          .string()
          .regex(/^[a-z0-9][a-z0-9_.-]*$/i)
          .optional(),
        source: z.string().optional(),
      })
      .loose()
      .prefault({}),
    action: z.enum(["wake", "agent"]).default("agent"),
    agentId: z.string().optional(),
    name: z.string().optional(),
    wakeMode: z.enum(["now", "next-heartbeat"]).optional(),
    /** `{{messages[0].subject}}`-style placeholders read the JSON body. */
    messageTemplate: z.string().optional(),
    textTemplate: z.string().optional(),
    sessionKey: z.string().optional(),
    deliver: z.boolean().optional(),
    channel: z.string().optional(),
    to: z.string().optional(),
    accountId: z.string().optional(),
    model: z.string().optional(),
    timeoutSeconds: z.number().int().positive().optional(),
  })
  .loose();
export type HookMapping = z.infer<typeof hookMappingSchema>;

export const hooksSchema = z
  .object({
    enabled: z.boolean().default(false),
    token: secretInputSchema.optional(),
    path: z
      .string()
      .regex(/^\/[a-z0-9/_-]+$/i, { message: 'expected a path such as "/hooks"' })
      .refine((path) => path !== "/", { message: "hooks.path cannot be /" })
      .default("/hooks"),
    defaultSessionKey: z.string().optional(),
    allowRequestSessionKey: z.boolean().default(false),
    allowedSessionKeyPrefixes: z.array(z.string().min(1)).optional(),
    /** "*" or omitted = every agent; [] = none. */
    allowedAgentIds: z.array(z.string().min(1)).optional(),
    mappings: z.array(hookMappingSchema).default([]),
    /**
     * Built-in mappings by name (functions/automation/hook-presets.ts); a `mappings` entry on the same
     * path wins. OpenClaw's `transformsDir` (JS modules loaded at request time) is not supported: a
     * Worker loads no code that was not bundled at deploy.
     */
    presets: z.array(z.enum(["gmail"])).default([]),
    /** Largest accepted hook body (OpenClaw's webhook routes: 256 KB). */
    maxBodyBytes: z
      .number()
      .int()
      .positive()
      .default(256 * 1024),
    /** Failed authentications per client address before a lockout of `lockoutSeconds` (429 + Retry-After). */
    maxFailedAuth: z.number().int().positive().default(20),
    failedAuthWindowSeconds: z.number().int().positive().default(60),
    lockoutSeconds: z.number().int().positive().default(60),
  })
  .loose()
  .prefault({});
export type HooksConfig = z.infer<typeof hooksSchema>;
