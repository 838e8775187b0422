import { z } from "zod";
import { secretInputSchema } from "./secret-ref.ts";

/**
 * The config file (`edgeclaw.json5`), with OpenClaw's key names and defaults. Unknown keys are
 * kept (OpenClaw has many keys this gateway does not act on yet) but every key that is read here is
 * validated, so a typo in a known block fails fast with its path.
 */

const modelRef = z
  .string()
  .regex(/^[^/\s]+\/\S+$/, { message: 'expected "provider/model"' });

const modelSelection = z.union([
  modelRef.transform((primary) => ({ primary, fallbacks: [] as string[] })),
  z.object({
    primary: modelRef.optional(),
    fallbacks: z.array(modelRef).default([]),
  }),
]);

export const queueModeSchema = z.enum(["steer", "followup", "collect", "interrupt"]);
export const queueDropSchema = z.enum(["summarize", "old", "new"]);

const gatewaySchema = z
  .object({
    auth: z
      .object({
        mode: z.enum(["token", "password", "none"]).optional(),
        token: secretInputSchema.optional(),
        password: secretInputSchema.optional(),
        rateLimit: z
          .object({
            maxAttempts: z.number().int().positive().default(10),
            windowMs: z.number().int().positive().default(60_000),
            lockoutMs: z.number().int().nonnegative().default(300_000),
            exemptLoopback: z.boolean().default(true),
          })
          .prefault({}),
      })
      .prefault({}),
    http: z
      .object({
        endpoints: z
          .object({
            chatCompletions: z
              .object({
                // OpenClaw ships this off; edgeclaw's web chat is built on it, so it is on here.
                enabled: z.boolean().default(true),
                maxBodyBytes: z.number().int().positive().default(20 * 1024 * 1024),
              })
              .prefault({}),
          })
          .prefault({}),
      })
      .prefault({}),
  })
  .loose()
  .prefault({});

const agentEntrySchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, { message: "expected an id of letters, digits, _ or -" }),
    default: z.boolean().optional(),
    name: z.string().optional(),
    model: modelSelection.optional(),
    /** Name of the seed folder for this agent's workspace (default: `workspace`). */
    workspace: z.string().optional(),
    timeoutSeconds: z.number().int().positive().optional(),
  })
  .loose();

const agentsSchema = z
  .object({
    defaults: z
      .object({
        model: modelSelection.prefault({}),
        timeoutSeconds: z.number().int().positive().default(172_800),
        /** Upper bound on model→tool round trips in one run (OpenClaw's loop guard). */
        maxToolIterations: z.number().int().positive().default(50),
        bootstrapMaxChars: z.number().int().positive().default(20_000),
        bootstrapTotalMaxChars: z.number().int().positive().default(150_000),
        skipBootstrap: z.boolean().default(false),
        userTimezone: z.string().optional(),
      })
      .loose()
      .prefault({}),
    list: z.array(agentEntrySchema).default([]),
  })
  .loose()
  .prefault({});

const providerModelSchema = z
  .object({
    id: z.string(),
    name: z.string().optional(),
    contextWindow: z.number().int().positive().optional(),
    maxTokens: z.number().int().positive().optional(),
    cost: z
      .object({
        input: z.number().nonnegative().default(0),
        output: z.number().nonnegative().default(0),
        cacheRead: z.number().nonnegative().default(0),
        cacheWrite: z.number().nonnegative().default(0),
      })
      .optional(),
  })
  .loose();

export const providerApiSchema = z.enum(["anthropic-messages", "openai-completions"]);

const providerSchema = z
  .object({
    baseUrl: z.url().optional(),
    apiKey: secretInputSchema.optional(),
    api: providerApiSchema.optional(),
    headers: z.record(z.string(), z.string()).optional(),
    models: z.array(providerModelSchema).default([]),
  })
  .loose();

const modelsSchema = z
  .object({
    providers: z.record(z.string(), providerSchema).default({}),
  })
  .loose()
  .prefault({});

const resetPolicySchema = z.object({
  mode: z.enum(["none", "daily", "idle"]).default("none"),
  atHour: z.number().int().min(0).max(23).default(4),
  idleMinutes: z.number().int().positive().optional(),
});

const sessionSchema = z
  .object({
    dmScope: z.enum(["main", "per-peer", "per-channel-peer", "per-account-channel-peer"]).default("main"),
    identityLinks: z.record(z.string(), z.array(z.string())).default({}),
    reset: resetPolicySchema.prefault({}),
    resetByType: z
      .object({
        direct: resetPolicySchema.optional(),
        group: resetPolicySchema.optional(),
        thread: resetPolicySchema.optional(),
      })
      .strict()
      .default({}),
    resetByChannel: z.record(z.string(), resetPolicySchema).default({}),
    resetTriggers: z.array(z.string()).default(["/new", "/reset"]),
  })
  .loose()
  .prefault({});

const queueSchema = z
  .object({
    mode: queueModeSchema.default("steer"),
    debounceMs: z.number().int().nonnegative().default(500),
    cap: z.number().int().default(20),
    drop: queueDropSchema.default("summarize"),
    byChannel: z.record(z.string(), queueModeSchema).default({}),
    debounceMsByChannel: z.record(z.string(), z.number().int().nonnegative()).default({}),
  })
  .prefault({});

const messagesSchema = z
  .object({
    queue: queueSchema,
    /** Reply chunks that failed this many sends are dead-lettered. */
    outbox: z
      .object({
        maxAttempts: z.number().int().positive().default(8),
        maxBackoffMs: z.number().int().positive().default(60_000),
      })
      .prefault({}),
    /** Transcript rows mirrored to Postgres per batch. */
    mirrorBatchSize: z.number().int().positive().default(200),
  })
  .loose()
  .prefault({});

const toolsSchema = z
  .object({
    web: z
      .object({
        fetch: z
          .object({
            enabled: z.boolean().default(true),
            maxChars: z.number().int().positive().default(50_000),
            timeoutSeconds: z.number().int().positive().default(30),
            maxRedirects: z.number().int().nonnegative().default(3),
            /** Hosts allowed even though they resolve to loopback/private ranges (tests, intranets). */
            allowPrivateHosts: z.array(z.string()).default([]),
          })
          .prefault({}),
      })
      .prefault({}),
  })
  .loose()
  .prefault({});

export const configSchema = z
  .object({
    gateway: gatewaySchema,
    agents: agentsSchema,
    models: modelsSchema,
    session: sessionSchema,
    messages: messagesSchema,
    tools: toolsSchema,
    channels: z.record(z.string(), z.unknown()).default({}),
  })
  .loose();

export type EdgeclawConfig = z.infer<typeof configSchema>;
export type AgentEntry = z.infer<typeof agentEntrySchema>;
export type ProviderConfig = z.infer<typeof providerSchema>;
export type QueueMode = z.infer<typeof queueModeSchema>;
export type QueueDrop = z.infer<typeof queueDropSchema>;
export type ResetPolicy = z.infer<typeof resetPolicySchema>;
