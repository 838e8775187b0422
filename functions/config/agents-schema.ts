import * as z from "zod";
import { sandboxSchema } from "./exec-schema.ts";
import { loopDetectionOverrideSchema } from "./loop-detection-schema.ts";
import { agentSkillsLimitsSchema, skillAllowlistSchema } from "./skills-schema.ts";
import { computeEnvSchema } from "./compute-env-schema.ts";
import { heartbeatDefaultsSchema, heartbeatOverrideSchema } from "./automation-schema.ts";
import { contextLimitsSchema, contextPruningSchema, memoryFlushSchema } from "./memory-keys.ts";
import { isTimeZone } from "../core/time-zone.ts";

/**
 * The `agents` block of the config file (`agents.defaults`, `agents.list[]`) and the tool-policy
 * scope shape it shares with the top-level `tools` block.
 */

/**
 * Sub-agents and the session tools (OpenClaw's tools/subagents and concepts/session-tool): the
 * spawn limits under `agents.defaults.subagents`, who the session tools may see
 * (`tools.sessions.visibility`) and the extra tool policy of child sessions
 * (`tools.subagents.tools`). Defaults and ranges are OpenClaw's.
 */
export const subagentsDefaultsSchema = z
  .object({
    /** How deep children may nest: 1 = only the main session spawns; 2 = orchestrator children (range 1–5). */
    maxSpawnDepth: z.number().int().min(1).max(5).default(1),
    /** Active children one session may have at once (range 1–20). */
    maxChildrenPerAgent: z.number().int().min(1).max(20).default(5),
    /**
     * Children running at once. edgeclaw has no gateway-wide lane: it is counted per requester
     * session, beside maxChildrenPerAgent (docs/concepts/sub-agents.md).
     */
    maxConcurrent: z.number().int().min(1).default(8),
    /** Default run timeout of a child (seconds); 0 = the agent's own timeout. */
    runTimeoutSeconds: z.number().int().nonnegative().default(0),
    /** Per attempt of handing the completion to the requester (ms). */
    announceTimeoutMs: z.number().int().positive().default(120_000),
    /** Children's records are kept this long after they end (minutes). */
    archiveAfterMinutes: z.number().int().positive().default(60),
    /** The model children run on (default: the requester's). */
    model: z.string().min(1).optional(),
    /** Agent ids `sessions_spawn` may target with `agentId` (`["*"]`: any configured agent). Default: only the requester's agent. */
    allowAgents: z.array(z.string().min(1)).optional(),
  })
  .loose()
  .prefault({});
export type SubagentsDefaults = z.infer<typeof subagentsDefaultsSchema>;

/**
 * `agents.list[].subagents`: one agent's own sub-agent settings, each over the default of the same
 * name for that agent's sessions (maxConcurrent, the gateway-wide lane, stays in the defaults).
 */
const subagentsOverrideSchema = z
  .object({
    /** How deep this agent's sessions may spawn (over agents.defaults.subagents.maxSpawnDepth). */
    maxSpawnDepth: z.number().int().min(1).max(5).optional(),
    /** Active children one of this agent's sessions may have. */
    maxChildrenPerAgent: z.number().int().min(1).max(20).optional(),
    /** Default run timeout of this agent's children (seconds; 0 = the agent's own timeout). */
    runTimeoutSeconds: z.number().int().nonnegative().optional(),
    /** Per attempt of handing a child's completion to this agent's sessions (ms). */
    announceTimeoutMs: z.number().int().positive().optional(),
    /** How long this agent's sessions keep their ended children's records (minutes). */
    archiveAfterMinutes: z.number().int().positive().optional(),
    /** The model this agent's children run on. */
    model: z.string().min(1).optional(),
    /** Agent ids this agent may spawn under with `agentId` (replaces the default list; `["*"]`: any). */
    allowAgents: z.array(z.string().min(1)).optional(),
  })
  .loose();

/** `tools.sessions`: which sessions sessions_list / sessions_history / sessions_send reach. */
export const sessionsToolsSchema = z
  .object({
    /** self: this session; tree: it and the children it spawned; agent: every session of the agent; all: every session. */
    visibility: z.enum(["self", "tree", "agent", "all"]).default("tree"),
  })
  .loose()
  .prefault({});

/** `tools.message`: who the message tool may write to. */
export const messageToolSchema = z
  .object({
    /**
     * edgeclaw: owner: only the owner's own direct chats (a direct chat whose last turn was the
     * owner's); visible: every conversation tools.sessions.visibility lets the caller see.
     */
    targets: z.enum(["owner", "visible"]).default("owner"),
  })
  .loose()
  .prefault({});

/** `tools.subagents.tools`: a last allow/deny layer for every child session (deny wins). */
export const subagentToolsSchema = z
  .object({
    tools: z
      .object({
        /** A final allow-only filter for children: it narrows what they have, never adds a tool. */
        allow: z.array(z.string()).optional(),
        /** Tools no child gets (wins over allow). */
        deny: z.array(z.string()).optional(),
      })
      .loose()
      .prefault({}),
  })
  .loose()
  .prefault({});

/**
 * OpenClaw's thinking levels (tools/thinking) and reasoning visibility levels. The logical level
 * is stored and resolved here; each provider adapter maps it to its own wire field
 * (functions/agent/providers/anthropic-thinking.ts, openai-reasoning.ts).
 */
export const THINK_LEVELS = [
  "off",
  "minimal",
  "low",
  "medium",
  "high",
  "xhigh",
  "adaptive",
  "max",
] as const;
export type ThinkLevel = (typeof THINK_LEVELS)[number];
export const thinkLevelSchema = z.enum(THINK_LEVELS);

/** `/reasoning`: whether a reply's thinking is shown, as a separate message before the answer. */
export const REASONING_LEVELS = ["off", "on", "stream"] as const;
export type ReasoningLevel = (typeof REASONING_LEVELS)[number];
export const reasoningLevelSchema = z.enum(REASONING_LEVELS);

export const modelRef = z
  .string()
  .regex(/^[^/\s]+\/\S+$/, { message: 'expected "provider/model"' });

export const modelSelection = z.union([
  modelRef.transform((primary) => ({ primary, fallbacks: [] as string[] })),
  z.object({
    primary: modelRef.optional(),
    fallbacks: z.array(modelRef).default([]),
  }),
]);

/** One scope of tool policy (`tools`, `agents.list[].tools`): profile, allow/alsoAllow/deny lists. */
export const toolProfileSchema = z.enum(["minimal", "coding", "messaging", "full"]);
export const toolPolicyFields = {
  profile: toolProfileSchema.optional(),
  allow: z.array(z.string()).optional(),
  alsoAllow: z.array(z.string()).optional(),
  deny: z.array(z.string()).optional(),
};
export const noAllowWithAlsoAllow = (policy: { allow?: string[]; alsoAllow?: string[] }) =>
  !(policy.allow !== undefined && policy.alsoAllow !== undefined);
export const allowWithAlsoAllowMessage = {
  message:
    "allow and alsoAllow cannot both be set in one scope: merge alsoAllow into allow, or use profile + alsoAllow",
};
export const agentToolPolicySchema = z
  .object({ ...toolPolicyFields, loopDetection: loopDetectionOverrideSchema.optional() })
  .loose()
  .refine(noAllowWithAlsoAllow, allowWithAlsoAllowMessage);
export type ToolPolicyConfig = z.infer<typeof agentToolPolicySchema>;

const agentEntrySchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, {
      message: "expected an id of letters, digits, _ or -",
    }),
    default: z.boolean().optional(),
    name: z.string().optional(),
    model: modelSelection.optional(),
    /** Name of the seed folder for this agent's workspace (default: `workspace`). */
    workspace: z.string().optional(),
    timeoutSeconds: z.number().int().positive().optional(),
    /** Per-agent tool policy; narrows the global `tools` policy (its profile replaces the global one). */
    tools: agentToolPolicySchema.optional(),
    /** Merged over agents.defaults.heartbeat; once any agent has one, only those agents beat. */
    heartbeat: heartbeatOverrideSchema.optional(),
    /** The skills this agent sees; replaces agents.defaults.skills (`[]`: none). */
    skills: skillAllowlistSchema,
    skillsLimits: agentSkillsLimitsSchema,
    /** This agent's thinking level when the session sets none (over agents.defaults.thinkingDefault). */
    thinkingDefault: thinkLevelSchema.optional(),
    /** This agent's /reasoning visibility when the session sets none. */
    reasoningDefault: reasoningLevelSchema.optional(),
    /** This agent's sub-agent settings over agents.defaults.subagents (functions/agent/subagent-limits.ts). */
    subagents: subagentsOverrideSchema.optional(),
  })
  .loose();

export const agentsSchema = z
  .object({
    defaults: z
      .object({
        model: modelSelection.prefault({}),
        timeoutSeconds: z.number().int().positive().default(172_800),
        /** Upper bound on model→tool round trips in one run (OpenClaw's loop guard), across resumes. */
        maxToolIterations: z.number().int().positive().default(50),
        /**
         * The thinking level when neither the message, the session nor the agent sets one. Unset:
         * "medium" for a model declared `reasoning: true`, else off (tools/thinking).
         */
        thinkingDefault: thinkLevelSchema.optional(),
        /** Whether replies show the model's thinking as a separate "Thinking" message (/reasoning). */
        reasoningDefault: reasoningLevelSchema.default("off"),
        /** Skills every agent sees unless it lists its own (unset: all of them). */
        skills: skillAllowlistSchema,
        /**
         * edgeclaw's own: times a run may be picked up again after its pass died (eviction, crash,
         * deploy) before it is ended with one notice and its messages dead-lettered.
         */
        maxRunResumes: z.number().int().nonnegative().default(3),
        /**
         * edgeclaw's own: wall time one alarm pass spends on a run before it checkpoints (between
         * model calls) and continues in the next pass; well under the platform's 15-minute limit.
         */
        runSliceSeconds: z.number().int().positive().max(720).default(600),
        /**
         * The largest PDF a sender can attach that is downloaded and read, in MB (OpenClaw's
         * key; 10 by default). Its text comes from Workers AI's toMarkdown; an Anthropic model
         * reads one without text natively (docs/concepts/media.md).
         */
        pdfMaxMb: z.number().positive().max(32).default(10),
        compaction: z
          .object({
            /** false stops proactive compaction only; /compact still works. */
            enabled: z.boolean().default(true),
            /** Compaction starts when the prompt would leave fewer tokens than this free. */
            reserveTokensFloor: z.number().int().nonnegative().default(20_000),
            /** Recent context kept verbatim. */
            keepRecentTokens: z.number().int().positive().default(20_000),
            memoryFlush: memoryFlushSchema,
          })
          .loose()
          .prefault({}),
        contextLimits: contextLimitsSchema,
        /** Old tool results trimmed and cleared once the prompt cache expired (memory-keys.ts). */
        contextPruning: contextPruningSchema,
        bootstrapMaxChars: z.number().int().positive().default(20_000),
        bootstrapTotalMaxChars: z.number().int().positive().default(60_000),
        skipBootstrap: z.boolean().default(false),
        /** When workspace bootstrap files are injected: every turn, not on safe continuations, or never. */
        contextInjection: z.enum(["always", "continuation-skip", "never"]).default("always"),
        userTimezone: z
          .string()
          .refine(isTimeZone, {
            message: 'expected an IANA time zone, e.g. "Europe/Berlin" or "America/New_York"',
          })
          .optional(),
        heartbeat: heartbeatDefaultsSchema,
        sandbox: sandboxSchema,
        /** AcaClaw's conda environments in the sandbox (compute-env-schema.ts). */
        computeEnv: computeEnvSchema,
        /** Sub-agent limits (subagentsDefaultsSchema, below). */
        subagents: subagentsDefaultsSchema,
      })
      .loose()
      .prefault({}),
    list: z.array(agentEntrySchema).default([]),
  })
  .loose()
  .prefault({});
