import type { EdgeclawConfig } from "../config/schema.ts";
import type { ChatType } from "../core/envelope.ts";
import type { ToolSpec } from "./types.ts";

/**
 * What a system prompt is built from and what it gives back: the per-run facts (PromptRuntime),
 * the whole input (config, agent, workspace files) and the rendered prompt with its per-file
 * accounting. Apart from the renderer (prompt.ts) and the Project Context builder
 * (prompt-project-context.ts) so both read one set of types without importing each other.
 */

/** Who runs the prompt: `full` for normal runs, `minimal` for sub-agents, `none` = identity only. */
export type PromptMode = "full" | "minimal" | "none";

export type BootstrapFileStatus = "injected" | "truncated" | "missing" | "empty" | "omitted";

/** Per-file accounting for diagnostics (`/context`, logs); the prompt itself carries no per-file sizes. */
export interface BootstrapFileReport {
  path: string;
  status: BootstrapFileStatus;
  rawChars: number;
  injectedChars: number;
  /** Why a file was cut or left out: its own limit or the shared total. */
  limitedBy?: "max/file" | "max/total";
}

export interface PromptRuntime {
  now: Date;
  /** Channel id (`slack`, `telegram`, `webchat`, …); absent for API calls. */
  channel?: string;
  chatType?: ChatType;
  /** The `provider/model` that will answer. */
  modelRef?: string;
  /** Tools the model will receive this run (after policy). */
  tools: ReadonlyArray<Pick<ToolSpec, "name" | "description">>;
  promptMode?: PromptMode;
  /**
   * The owner's own private conversation (see `isMainPrivateSession`); MEMORY.md is injected only
   * there. Unset means no: a prompt whose session is not known to be private gets no memory.
   */
  mainPrivateSession?: boolean;
  /** A safe continuation turn (after a completed reply); `contextInjection: "continuation-skip"` skips files. */
  continuation?: boolean;
  thinking?: string;
  /** Extra context the caller adds under "Group Chat Context" (or "Subagent Context" in minimal mode). */
  extraContext?: string;
  /** The rendered "Active Subagents" block (active-subagents.ts), while children have not reported. */
  activeSubagents?: string;
  /** The rendered "Startup Context" (daily notes after /new or /reset; main private session only). */
  startupContext?: string;
  /** The rendered "Computing Environments" (compute-env/prompt-section.ts), when the agent has one. */
  computingEnvironments?: string;
  /** The rendered "Skills" catalog (skills/prompt-section.ts), when the agent has eligible skills. */
  skills?: string;
}

export interface SystemPromptInput {
  config: EdgeclawConfig;
  agent: { id: string; name?: string };
  /** Workspace contents by path; a path that is absent is a missing file. */
  files: ReadonlyMap<string, string> | Readonly<Record<string, string>>;
  runtime: PromptRuntime;
}

export interface SystemPrompt {
  /** The whole prompt: `stable` + `dynamic`. */
  text: string;
  /** Above the cache boundary: the same across turns while config, tools and files are unchanged. */
  stable: string;
  /** Below the cache boundary: messaging, time, runtime. */
  dynamic: string;
  files: BootstrapFileReport[];
}
