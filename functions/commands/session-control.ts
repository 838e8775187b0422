import type { SandboxUsageView } from "../sandbox/report.ts";
import type { QueueDrop, QueueMode } from "../config/schema.ts";
import type { ReplyRoute } from "../core/envelope.ts";
import type { ReasoningLevel, ThinkLevel } from "../config/agents-schema.ts";

/**
 * SessionControl — what slash commands may do to a session. The SessionDO implements it; commands
 * (functions/commands/execute.ts) only ever talk to this interface, so they run on the fast path
 * without a model call.
 */
export {
  REASONING_LEVELS,
  THINK_LEVELS,
  type ReasoningLevel,
  type ThinkLevel,
} from "../config/agents-schema.ts";

export const VERBOSE_LEVELS = ["off", "on", "full"] as const;
export type VerboseLevel = (typeof VERBOSE_LEVELS)[number];

export interface QueueSettings {
  mode?: QueueMode;
  debounceMs?: number;
  cap?: number;
  drop?: QueueDrop;
}

/** Per-session overrides; an absent field inherits the config. */
export interface SessionSettings {
  modelOverride?: string;
  /**
   * `/model <model>@<profile>`: the auth profile this session tries first for that profile's
   * provider (OpenClaw's user pin; kept across /new and /reset, cleared by /model default).
   */
  authProfile?: string;
  /** `/usage off|tokens|full`: the per-reply usage footer (absent: `messages.responseUsage`). */
  responseUsage?: "off" | "tokens" | "full";
  thinkLevel?: ThinkLevel;
  /** `/reasoning on|off|stream`: the model's thinking shown as its own message. */
  reasoningLevel?: ReasoningLevel;
  verbose?: VerboseLevel;
  queue?: QueueSettings;
  /** `/send on|off`: this session's replies reach its chat, or are held back (session.sendPolicy). */
  sendPolicy?: "allow" | "deny";
}

/** A patch: `null` clears an override, undefined leaves it alone. */
export type SessionSettingsPatch = {
  [K in keyof SessionSettings]?: SessionSettings[K] | null;
};

/** What the session's model calls cost so far (durable-objects/session/mirror/model-calls.ts). */
export interface SessionSpendView {
  calls: number;
  usd: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Per kind of call; `ms` for a kind billed by time (the browser's seconds). */
  byKind: Record<string, { calls: number; usd: number; tokens: number; ms?: number }>;
  /** Estimated platform cost of the finished runs (an estimate from list prices). */
  platformUsd: number;
  /** Finished sandbox commands and their wall time (container time priced as an estimate). */
  sandbox?: SandboxUsageView;
}

export interface SessionStatus {
  sessionKey: string;
  sessionId: string;
  agentId: string;
  /** Effective `provider/model` (override or configured default). */
  model: string;
  /** Why that model answers when the config names none: the demo switch, or a provider key's default. */
  modelOrigin?: "demo" | "key-default";
  modelOverride?: string;
  inputTokens: number;
  outputTokens: number;
  /** Tokens currently in the context (last prompt size), when known. */
  contextTokens?: number;
  contextWindow?: number;
  /** Effective queue behaviour after session override → byChannel → messages.queue. */
  queue: Required<QueueSettings>;
  /** The level the next run uses: session override, else the agent's or the global default. */
  thinkLevel: ThinkLevel;
  /** Where thinkLevel comes from: /think, the agent's or the global thinkingDefault, or the model. */
  thinkSource: "session" | "agent" | "config" | "model";
  reasoningLevel: ReasoningLevel;
  /** Whether the agent's replies reach this chat, and which layer decided it (session.sendPolicy, /send). */
  send: { allowed: boolean; source: "session" | "rule" | "default" };
  verbose: VerboseLevel;
  sessionStartedAt: number;
  lastInteractionAt?: number;
  compactions: number;
  runActive: boolean;
  queuedMessages: number;
  spend: SessionSpendView;
  /** The footer mode in force: session override, else `messages.responseUsage`. */
  responseUsage: "off" | "tokens" | "full";
  /** The model's provider has auth profiles: which one this session uses, and each one's state. */
  authProfiles?: AuthProfilesStatus;
}

/** Names and states only: /status never shows key material. */
export interface AuthProfilesStatus {
  provider: string;
  /** The profile that last answered this session (its sticky profile). */
  current?: string;
  /** The profile `/model …@<profile>` pinned for this provider, when one is. */
  pinned?: string;
  profiles: Array<{
    id: string;
    state: "ready" | "cooldown" | "disabled" | "no_key";
    reason?: string;
    /** Until when a cooling or disabled profile is out (epoch ms). */
    until?: number;
  }>;
}

export interface CompactResult {
  compacted: boolean;
  tokensBefore?: number;
  tokensAfter?: number;
  /** Why nothing was compacted (empty transcript, run in progress, …). */
  reason?: string;
  /** How it was compacted when not by a summary (the model failed: older turns were dropped). */
  note?: string;
}

export interface SessionControl {
  status(): Promise<SessionStatus>;
  /** Archives the current transcript and starts a new sessionId under the same key. */
  newSession(options?: { model?: string }): Promise<{ sessionId: string }>;
  /** In-place reset; `soft` keeps the transcript and only reruns startup. */
  reset(options?: { soft?: boolean }): Promise<{ sessionId: string }>;
  /** Cancels queued turns first, then aborts the active run. */
  stop(): Promise<{ abortedRun: boolean; cancelledQueued: number; killedCommands?: number }>;
  /** `/approve <id> allow-once|allow-always|deny`: a sandbox command waiting for approval. */
  approveExec(
    id: string,
    decision: "allow-once" | "allow-always" | "deny",
    approver: string,
  ): Promise<string>;
  getSettings(): Promise<SessionSettings>;
  updateSettings(patch: SessionSettingsPatch): Promise<SessionSettings>;
  compact(instructions?: string): Promise<CompactResult>;
  /** `/env …`: the agent's computing environment as last listed (compute-env/chat-command.ts). */
  computeEnv(agentId: string, args: string): Promise<string>;
  /** `/export-session`: writes the transcript into the workspace; answers where, or why not. */
  exportSession(request: ExportRequest): Promise<string>;
  /** `/context`: what the next run here would send the model, piece by piece, with sizes. */
  context(ctx: ToolsQuery): Promise<ContextReport>;
  /** `/tools`: the tools the next run of this session would get, for this sender in this chat. */
  tools(ctx: ToolsQuery): Promise<Array<{ name: string; description: string }>>;
  /** `/skill`: the agent's skills, each with why it is left out of runs here (if it is). */
  skills(ctx: ToolsQuery): Promise<SkillView[]>;
  /** `/subagents list|info`: this session's children, oldest first. */
  subagents(): Promise<SubagentSummary[]>;
  /** `/subagents log`: a child's recent turns (a target it cannot find: the reason instead). */
  subagentLog(
    target: string,
    limit: number,
  ): Promise<
    { child: SubagentSummary; turns: Array<{ role: string; text: string; at: number }> } | string
  >;
  /** `/subagents kill`: stops a child (it still reports once); the answer to show. */
  killSubagent(target: string): Promise<string>;
}

/** A child as /subagents shows it. */
export interface SubagentSummary {
  childSessionKey: string;
  runId: string;
  agentId: string;
  label?: string;
  taskName?: string;
  task: string;
  state: string;
  outcome?: string;
  result?: string;
  startedAt: string;
  endedAt?: string;
  runtimeMs?: number;
}

/** Who asks and where: what the toolset depends on (see durable-objects/session/run/toolset.ts). */
export interface ToolsQuery {
  agentId: string;
  senderIsOwner: boolean;
  route?: ReplyRoute;
  sender: { channel: string; accountId: string };
}

export interface SkillView {
  name: string;
  description: string;
  location: string;
  userInvocable: boolean;
  excluded?: string;
}

/** What a run's context is made of (concepts/context): sizes in characters; tokens are estimates. */
export interface ContextReport {
  model: string;
  contextWindow: number;
  systemPromptChars: number;
  /** The injected workspace files (Project Context). */
  projectContextChars: number;
  bootstrapMaxChars: number;
  bootstrapTotalMaxChars: number;
  files: Array<{
    path: string;
    status: string;
    rawChars: number;
    injectedChars: number;
    limitedBy?: string;
  }>;
  /** The `## Skills` catalog in the prompt, and each skill's entry in it. */
  skills: { promptChars: number; entries: Array<{ name: string; chars: number }> };
  /** The `## Tooling` list in the prompt, and the JSON schemas sent beside it. */
  tools: {
    names: string[];
    listChars: number;
    schemaChars: number;
    schemas: Array<{ name: string; chars: number }>;
  };
  /** The conversation the next run would send: messages and their estimated tokens. */
  /** `pruned`: old tool results sent trimmed / cleared (session pruning), when any are. */
  transcript: { messages: number; tokens: number; pruned?: { trimmed: number; cleared: number } };
}

export interface ExportRequest {
  agentId: string;
  senderIsOwner: boolean;
  /** A workspace path ending in .md, .json or .html; absent: a new file under exports/. */
  path?: string;
}
