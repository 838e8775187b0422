import { execSchema } from "./exec-schema.ts";
import { browserSchema, pluginsSchema, webSearchSchema } from "./web-search-schema.ts";
import { loopDetectionSchema } from "./loop-detection-schema.ts";
import { skillsSchema } from "./skills-schema.ts";
import { mediaSchema, ttsSchema } from "./media-schema.ts";
import * as z from "zod";
import { secretInputSchema } from "./secret-ref.ts";
import { cronSchema, hooksSchema } from "./automation-schema.ts";
import { diagnosticsSchema, loggingSchema } from "./observability.ts";
import { memorySchema } from "./memory-keys.ts";
import {
  accessGroupsSchema,
  bindingsSchema,
  commandsSchema,
  groupChatSchema,
} from "./routing-keys.ts";
import { budgetsSchema, meteringSchema } from "./budgets.ts";
import { companionSchema, databaseSchema, httpEndpointsSchema } from "./infrastructure-schema.ts";
import { authConfigIssues, authSchema } from "./auth-schema.ts";
import {
  agentsSchema,
  allowWithAlsoAllowMessage,
  noAllowWithAlsoAllow,
  messageToolSchema,
  sessionsToolsSchema,
  subagentToolsSchema,
  toolPolicyFields,
} from "./agents-schema.ts";

export {
  agentToolPolicySchema,
  toolProfileSchema,
  type ToolPolicyConfig,
} from "./agents-schema.ts";

/**
 * The config file (`edgeclaw.json5`), with OpenClaw's key names and defaults. Unknown keys are
 * kept (OpenClaw has many keys this gateway does not act on yet) but every key that is read here is
 * validated, so a typo in a known block fails fast with its path.
 */

export const queueModeSchema = z.enum(["steer", "followup", "collect", "interrupt"]);
export const queueDropSchema = z.enum(["summarize", "old", "new"]);

const gatewaySchema = z
  .object({
    /**
     * The Worker's public origin (https://edgeclaw.example.workers.dev), for links a platform
     * fetches itself: the signed media URLs LINE and Twilio MMS read files from.
     */
    publicUrl: z.url().optional(),
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
    http: httpEndpointsSchema,
  })
  .loose()
  .prefault({});

const providerModelSchema = z
  .object({
    id: z.string(),
    name: z.string().optional(),
    contextWindow: z.number().int().positive().optional(),
    maxTokens: z.number().int().positive().optional(),
    /**
     * USD per million tokens; fields left out are 0 (`cost: {}` prices a free local model). Without
     * it the model has no price — unless it is a built-in provider's default model, which carries
     * its provider's list price — and a USD budget refuses its calls (`budgets.allowUnpricedModels`).
     */
    /** What the model takes in (OpenClaw's key): `["text", "image"]` sends it images as pixels. */
    input: z.array(z.string()).optional(),
    /** The model thinks (OpenClaw's key): unset /think resolves to "medium" for it (tools/thinking). */
    reasoning: z.boolean().optional(),
    compat: z
      .object({
        /** The `reasoning_effort` values an OpenAI-compatible model takes, e.g. ["low", "high", "xhigh"]. */
        supportedReasoningEfforts: z.array(z.string()).optional(),
      })
      .loose()
      .optional(),
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

/** OpenClaw's `api` names for the wire formats edgeclaw speaks (functions/agent/providers/). */
export const providerApiSchema = z.enum([
  "anthropic-messages",
  "openai-completions",
  "openai-responses",
  "google-generative-ai",
]);

const providerSchema = z
  .object({
    baseUrl: z.url().optional(),
    apiKey: secretInputSchema.optional(),
    api: providerApiSchema.optional(),
    headers: z.record(z.string(), z.string()).optional(),
    models: z.array(providerModelSchema).default([]),
    /** Read by model-resolve.ts: idle timeout, and limits for models the catalog does not list. */
    timeoutSeconds: z.number().positive().optional(),
    contextWindow: z.number().int().positive().optional(),
    maxTokens: z.number().int().positive().optional(),
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

/** OpenClaw durations: `30d`, `24h`, `90m`, `45s`, `500ms`, `2w`; a bare number is milliseconds. */
const durationMs = z.union([
  z.number().int().nonnegative(),
  z
    .string()
    .regex(/^\d+(ms|s|m|h|d|w)$/, { message: 'expected a duration such as "30d", "24h" or "90m"' })
    .transform((text) => {
      const [, amount, unit] = /^(\d+)(ms|s|m|h|d|w)$/.exec(text)!;
      const unitMs = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[
        unit as "ms"
      ];
      return Number(amount) * unitMs;
    }),
]);

/**
 * OpenClaw's session-store upkeep, applied here to each session's Durable Object storage
 * (durable-objects/session/upkeep/retention.ts). `mode` and the disk budgets are accepted and not acted on.
 */
const sessionMaintenanceSchema = z
  .object({
    /** Dead-lettered reply chunks are kept this long for operators (and at most `maxEntries`). */
    pruneAfter: durationMs.prefault("30d"),
    /** Most dead letters, and most runs of the current session, one session keeps. */
    maxEntries: z.number().int().positive().default(500),
    /** Without DATABASE_URL: transcript rows out of the model's context (compacted, earlier sessions) are kept this long; false keeps them. */
    resetArchiveRetention: z.union([durationMs, z.literal(false)]).prefault("30d"),
  })
  .loose()
  .prefault({});

const sessionSchema = z
  .object({
    dmScope: z
      .enum(["main", "per-peer", "per-channel-peer", "per-account-channel-peer"])
      .default("main"),
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
    maintenance: sessionMaintenanceSchema,
    /** Whether replies reach a session's chat (functions/routing/send-policy.ts); /send overrides it. */
    sendPolicy: z
      .object({
        default: z.enum(["allow", "deny"]).default("allow"),
        rules: z
          .array(
            z.object({
              action: z.enum(["allow", "deny"]),
              match: z
                .object({
                  channel: z.string().optional(),
                  chatType: z.enum(["direct", "group", "channel", "dm"]).optional(),
                  keyPrefix: z.string().optional(),
                  rawKeyPrefix: z.string().optional(),
                })
                .strict(),
            }),
          )
          .default([]),
      })
      .prefault({}),
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
    /** edgeclaw's own: allowed system events (edits, reactions, …) waiting for a session's next run. */
    systemEvents: z.object({ maxQueued: z.number().int().nonnegative().default(20) }).prefault({}),
    /** Transcript rows mirrored to Postgres per batch. */
    mirrorBatchSize: z.number().int().positive().default(200),
    /**
     * edgeclaw's own: an event whose triage or run setup keeps failing transiently (Postgres down,
     * 5xx) is tried this many times with backoff capped at maxBackoffMs, then dead-lettered with one
     * notice. Permanent failures (4xx, invalid data, a bug) are dead-lettered at once.
     */
    processing: z
      .object({
        maxAttempts: z.number().int().positive().default(12),
        maxBackoffMs: z.number().int().positive().default(60_000),
      })
      .prefault({}),
    groupChat: groupChatSchema,
    /** Per-reply usage footer by default (`/usage off|tokens|full` overrides it per session); legacy `on` = tokens. */
    responseUsage: z
      .enum(["off", "tokens", "full", "on"])
      .default("off")
      .transform((mode) => (mode === "on" ? "tokens" : mode)),
  })
  .loose()
  .prefault({});

const toolsSchema = z
  .object({
    ...toolPolicyFields,
    web: z
      .object({
        fetch: z
          .object({
            enabled: z.boolean().default(true),
            maxChars: z.number().int().positive().default(20_000),
            /** Hard ceiling on `maxChars` (config and the tool's own parameter). */
            maxCharsCap: z.number().int().positive().default(20_000),
            /** Body bytes read before extraction; clamped to 32000–10000000 as OpenClaw does. */
            maxResponseBytes: z
              .number()
              .int()
              .positive()
              .default(750_000)
              .transform((n) => Math.min(10_000_000, Math.max(32_000, n))),
            timeoutSeconds: z.number().int().positive().default(30),
            /** Successful fetches are reused this long (0 turns the cache off). */
            cacheTtlMinutes: z.number().nonnegative().default(15),
            maxRedirects: z.number().int().nonnegative().default(3),
            readability: z.boolean().default(true),
            userAgent: z.string().optional(),
            /** Extra request headers (values are treated as secrets, never logged), sent only to `headersHosts`. */
            headers: z.record(z.string(), z.string()).optional(),
            /**
             * edgeclaw: the hosts `headers` are sent to, on the first hop or after a redirect —
             * `api.example.com` (any port), `api.example.com:8443`, or `*.example.com` (subdomains).
             * Empty: the headers are sent nowhere (a model-chosen URL never receives them).
             */
            headersHosts: z.array(z.string().min(1)).default([]),
            /** edgeclaw: DNS-over-HTTPS JSON resolver (default Cloudflare's 1.1.1.1) used to check where a host name points before fetching it. */
            dnsResolverUrl: z.url().default("https://cloudflare-dns.com/dns-query"),
            ssrfPolicy: z
              .object({
                dangerouslyAllowPrivateNetwork: z.boolean().default(false),
                allowedHostnames: z.array(z.string()).default([]),
                allowRfc2544BenchmarkRange: z.boolean().default(false),
                allowIpv6UniqueLocalRange: z.boolean().default(false),
              })
              .prefault({}),
            /** edgeclaw's earlier name for `ssrfPolicy.allowedHostnames`; both lists are honoured. */
            allowPrivateHosts: z.array(z.string()).default([]),
          })
          .prefault({}),
        search: webSearchSchema,
      })
      .prefault({}),
    exec: execSchema,
    media: mediaSchema,
    loopDetection: loopDetectionSchema,
    sessions: sessionsToolsSchema,
    message: messageToolSchema,
    subagents: subagentToolsSchema,
  })
  .loose()
  .refine(noAllowWithAlsoAllow, allowWithAlsoAllowMessage)
  .prefault({});

/**
 * One block per channel, each kept as given here: the base schema knows no channel. The channel
 * registry composes the schema the gateway parses with (functions/channels/gateway-config.ts),
 * where every registered channel validates its own block with its `configSchema`.
 */
const channelsSchema = z.record(z.string(), z.unknown()).default({});

/**
 * The config file without the channels' own blocks: what every key outside `channels.<id>` means.
 * Imports no channel, no routing and no database code.
 */
export const baseConfigSchema = z
  .object({
    companion: companionSchema,
    database: databaseSchema,
    gateway: gatewaySchema,
    agents: agentsSchema,
    models: modelsSchema,
    /** API-key profiles per model provider and their order (auth-schema.ts, docs/concepts/model-failover.md). */
    auth: authSchema,
    session: sessionSchema,
    messages: messagesSchema,
    tools: toolsSchema,
    browser: browserSchema,
    memory: memorySchema,
    channels: channelsSchema,
    bindings: bindingsSchema,
    commands: commandsSchema,
    accessGroups: accessGroupsSchema,
    logging: loggingSchema,
    diagnostics: diagnosticsSchema,
    budgets: budgetsSchema,
    metering: meteringSchema,
    cron: cronSchema,
    hooks: hooksSchema,
    plugins: pluginsSchema,
    skills: skillsSchema,
    tts: ttsSchema,
  })
  .loose()
  .superRefine((config, ctx) => {
    // Profiles name providers and orders name profiles: checked across the two blocks.
    for (const issue of authConfigIssues(config.auth, Object.keys(config.models.providers)))
      ctx.addIssue({ code: "custom", ...issue });
  });

export type EdgeclawConfig = z.infer<typeof baseConfigSchema>;
export type AgentEntry = EdgeclawConfig["agents"]["list"][number];
export type ProviderConfig = z.infer<typeof providerSchema>;
export type QueueMode = z.infer<typeof queueModeSchema>;
export type QueueDrop = z.infer<typeof queueDropSchema>;
export type ResetPolicy = z.infer<typeof resetPolicySchema>;
