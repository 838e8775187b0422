import * as z from "zod";
import { replyRouteSchema } from "../core/envelope.ts";
import { isTimeZone } from "../core/time-zone.ts";

/**
 * edgeclaw's own `budgets` and `metering` config (OpenClaw has no spend limits). A budget is a cap
 * per scope — global, each agent, each session, each sender — per day and/or per month, in USD
 * and/or tokens, and sandbox seconds. The gateway checks it before every model call with the call's
 * worst case, and before every sandbox command with the time already used (durable-objects/budget.ts
 * holds the counters, one object per scope).
 */

const limitSchema = z
  .object({
    /**
     * USD per period, priced from `models.providers.*.models[].cost` (or the built-in price of a
     * provider's default model). A call to a model with no price is refused under this cap
     * unless `budgets.allowUnpricedModels` is true.
     */
    usd: z.number().positive().optional(),
    /** Tokens per period: input + output + cache read + cache write. */
    tokens: z.number().int().positive().optional(),
    /**
     * Seconds of sandbox command wall time per period (`exec`, background commands, approved
     * commands; what /usage cost shows as Sandbox). Once the scope's finished commands plus the
     * time its running ones have run so far reach it, new commands are refused until the period
     * ends; running ones keep their own timeout. Counted for global, agent and session scopes
     * (not per sender: exec is owner-only unless tools.exec.allowNonOwners).
     */
    sandboxSeconds: z.number().int().positive().optional(),
  })
  .strict();

export const scopeLimitsSchema = z
  .object({
    day: limitSchema.optional(),
    month: limitSchema.optional(),
    /** Overrides `budgets.warnAt` for this scope. */
    warnAt: z.number().gt(0).max(1).optional(),
  })
  .strict();

export type ScopeLimits = z.infer<typeof scopeLimitsSchema>;

const timeZoneSchema = z.string().refine(isTimeZone, { message: "unknown IANA time zone" });

export const budgetsSchema = z
  .object({
    /** Day and month boundaries are midnight in this zone. */
    timeZone: timeZoneSchema.default("UTC"),
    /** Fraction of a cap at which the operator gets one notice per scope and period. */
    warnAt: z.number().gt(0).max(1).default(0.8),
    /**
     * A reservation (a call's worst case, held while the call runs) that is never settled — the
     * object running the call crashed — is released after this long, so it cannot block a budget.
     * Longer than any one model call (agents.defaults.timeoutSeconds bounds a whole run).
     */
    reservationTtlSeconds: z.number().int().positive().default(900),
    /**
     * A model with no price (no `cost` in its `models.providers.<id>.models[]` entry, and not a
     * built-in default model) has calls whose cost cannot be known, so under a USD cap they are
     * refused before they are made. True lets them through: they count $0 against USD caps
     * (token caps still count them) — a USD cap then does not limit them.
     */
    allowUnpricedModels: z.boolean().default(false),
    /**
     * The daily sandbox time cap of every session, in seconds, where `budgets.session.day
     * .sandboxSeconds` is not set: a runaway loop of commands stops at 4 hours of command time a
     * day per session (on Cloudflare Containers that is at most ~$0.11 on "basic"). 0: no default.
     */
    sandboxSecondsPerSessionDay: z.number().int().nonnegative().default(14_400),
    /** Where the operator's warnings and cap alerts go (a chat the bot can post in). */
    alertTarget: replyRouteSchema
      .pick({ channel: true, accountId: true, to: true, threadId: true })
      .optional(),
    global: scopeLimitsSchema.optional(),
    /** Applies to every agent on its own; `agents.<id>` replaces it for that agent. */
    agent: scopeLimitsSchema.optional(),
    agents: z.record(z.string(), scopeLimitsSchema).default({}),
    /** Applies to every session key on its own. */
    session: scopeLimitsSchema.optional(),
    /** Applies to every sender (`<channel>:<senderId>`) on its own, across sessions. */
    sender: scopeLimitsSchema.optional(),
  })
  .strict()
  .superRefine((budgets, ctx) => {
    // Sandbox time is counted per global, agent and session scope only: a sender cap would be ignored.
    for (const period of ["day", "month"] as const)
      if (budgets.sender?.[period]?.sandboxSeconds !== undefined)
        ctx.addIssue({
          code: "custom",
          path: ["sender", period, "sandboxSeconds"],
          message:
            "sandbox time is capped per global, agent and session scope, not per sender (exec is owner-only unless tools.exec.allowNonOwners); set budgets.session or budgets.agent",
        });
  })
  .prefault({});

export type BudgetsConfig = z.infer<typeof budgetsSchema>;

/**
 * Published list prices used for the platform cost estimate (USD). Defaults: Cloudflare Workers
 * Paid (requests $0.30 per million, Durable Object requests $0.15 per million, Durable Object
 * duration $12.50 per million GB-s at 128 MB) and Neon (compute $0.14 per CU-hour). Included
 * free allowances are ignored, so the figure is an upper estimate, never a bill.
 */
export const platformPricesSchema = z
  .object({
    workerRequestPerMillion: z.number().nonnegative().default(0.3),
    durableObjectRequestPerMillion: z.number().nonnegative().default(0.15),
    durableObjectGbSecondPerMillion: z.number().nonnegative().default(12.5),
    /** Memory a Durable Object is billed for while active. */
    durableObjectMemoryGb: z.number().positive().default(0.128),
    postgresComputeUnitHour: z.number().nonnegative().default(0.14),
    /** Compute seconds one mirrored Postgres write is assumed to keep a 0.25-CU endpoint busy. */
    postgresSecondsPerQuery: z.number().nonnegative().default(0.05),
    postgresComputeUnits: z.number().positive().default(0.25),
  })
  .strict()
  .prefault({});

export type PlatformPrices = z.infer<typeof platformPricesSchema>;

export const meteringSchema = z
  .object({ platformPrices: platformPricesSchema })
  .strict()
  .prefault({});
