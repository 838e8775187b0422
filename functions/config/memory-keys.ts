import * as z from "zod";
import { secretInputSchema } from "./secret-ref.ts";
import { durationText } from "./automation-schema.ts";

/**
 * Memory keys with OpenClaw's names and defaults (concepts/memory-search, memory-builtin,
 * gateway/config-agents, automation/hooks): the search index, its embedding provider, `memory_get`'s
 * cap, the pre-compaction flush and the session-memory capture on /new and /reset.
 */

/** `memory.search.extraPaths`: a workspace file or folder, or `{ path, pattern }` (a `*` glob under path). */
const extraPathSchema = z.union([
  z.string().min(1),
  z.object({ path: z.string().min(1), pattern: z.string().min(1).optional() }),
]);

export const memorySchema = z
  .object({
    search: z
      .object({
        enabled: z.boolean().default(true),
        /**
         * `none` = keyword only, on purpose. Unset or `auto`: embeddings when an endpoint and key are
         * configured, keyword-only otherwise and when they fail. Any other id (`openai`,
         * `openai-compatible`, …) is explicit: if it fails, memory_search says "memory unavailable".
         */
        provider: z.string().min(1).optional(),
        model: z.string().min(1).optional(),
        /** OpenAI-compatible base URL (`…/v1`); `/embeddings` is appended. Default: OpenAI's. */
        baseUrl: z.url().optional(),
        apiKey: secretInputSchema.optional(),
        extraPaths: z.array(extraPathSchema).default([]),
        chunking: z
          .object({
            tokens: z.number().int().min(32).max(8192).default(400),
            overlap: z.number().int().nonnegative().default(80),
          })
          .refine((c) => c.overlap < c.tokens, {
            message: "chunking.overlap must be smaller than chunking.tokens",
          })
          .prefault({}),
        query: z
          .object({
            maxResults: z.number().int().positive().max(50).default(6),
            minScore: z.number().min(0).max(1).default(0.35),
            hybrid: z
              .object({
                vectorWeight: z.number().min(0).max(1).default(0.7),
                textWeight: z.number().min(0).max(1).default(0.3),
                candidateMultiplier: z.number().int().positive().max(20).default(4),
              })
              .prefault({}),
          })
          .prefault({}),
        /** Dated notes (memory/YYYY-MM-DD*.md) lose half their weight every this many days; 0 = off. */
        recencyHalfLifeDays: z.number().nonnegative().default(30),
        sync: z
          .object({
            /** Quiet time after the last write before the index is brought up to date. */
            watchDebounceMs: z.number().int().nonnegative().default(1500),
          })
          .prefault({}),
        /** Chunks per embeddings request. */
        batchSize: z.number().int().positive().max(2048).default(64),
        timeoutSeconds: z.number().int().positive().default(60),
      })
      .loose()
      .prefault({}),
  })
  .loose()
  .prefault({});

export const contextLimitsSchema = z
  .object({
    /** Characters one memory_get returns before it is cut (with a continuation hint). */
    memoryGetMaxChars: z.number().int().positive().default(12_000),
  })
  .loose()
  .prefault({});

/**
 * `agents.defaults.contextPruning` (OpenClaw's concepts/session-pruning): old tool results trimmed
 * (over 4,000 characters: head and tail kept) and then cleared, in what the model is sent, once the
 * prompt cache has expired — never in the transcript. Unset `mode`: "cache-ttl" for an Anthropic
 * model, "off" for the others; unset `ttl`: the model's prompt-cache lifetime (5 minutes, or 1 hour
 * with `cacheRetention: "long"`), "5m" when mode is set by hand.
 */
export const contextPruningSchema = z
  .object({
    mode: z.enum(["off", "cache-ttl"]).optional(),
    /** How long after the last model call the context is left as it was (the cache's lifetime). */
    ttl: durationText.optional(),
    /** Which tools' results may be pruned, by name (`*` matches any run of characters). */
    tools: z
      .object({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() })
      .loose()
      .prefault({}),
    hardClear: z
      .object({
        /** false: results are only trimmed, never cleared. */
        enabled: z.boolean().default(true),
        /** What a cleared result reads. */
        placeholder: z.string().min(1).default("[Old tool result content cleared]"),
      })
      .loose()
      .prefault({}),
  })
  .loose()
  .prefault({});
export type ContextPruningConfig = z.infer<typeof contextPruningSchema>;

/** `agents.defaults.compaction.memoryFlush`: a silent turn before compaction to save durable notes. */
export const memoryFlushSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** The flush runs once the prompt comes within this many tokens of the compaction threshold. */
    softThresholdTokens: z.number().int().nonnegative().default(4000),
    /** Exact `provider/model` for the flush turn (no fallbacks); unset = the session's model. */
    model: z
      .string()
      .regex(/^[^/\s]+\/\S+$/)
      .optional(),
  })
  .loose()
  .prefault({});

/** `hooks.internal.entries.session-memory`: read on its own so the inbound `hooks.*` block stays separate. */
const sessionMemoryHookSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** User/assistant messages saved from the session that /new or /reset ends. */
    messages: z.number().int().positive().max(200).default(15),
  })
  .loose();

export type SessionMemoryHookConfig = z.infer<typeof sessionMemoryHookSchema>;

export function sessionMemoryHookConfig(config: object): SessionMemoryHookConfig {
  const hooks = (config as { hooks?: unknown }).hooks;
  const entry = z
    .object({
      internal: z
        .object({ entries: z.record(z.string(), z.unknown()).optional() })
        .loose()
        .optional(),
    })
    .loose()
    .safeParse(hooks ?? {});
  const raw = entry.success ? entry.data.internal?.entries?.["session-memory"] : undefined;
  const parsed = sessionMemoryHookSchema.safeParse(raw ?? {});
  return parsed.success ? parsed.data : sessionMemoryHookSchema.parse({});
}

export type MemoryConfig = z.infer<typeof memorySchema>;
export type MemorySearchConfig = MemoryConfig["search"];
