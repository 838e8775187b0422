/**
 * What the session tools (sessions_spawn, sessions_yield, subagents, sessions_list,
 * sessions_history, sessions_send) may ask of the session they run in. The SessionDO implements
 * it (durable-objects/session/subagents/host.ts); the tools hold no storage of their own.
 */

export interface SpawnRequest {
  task: string;
  label?: string;
  taskName?: string;
  agentId?: string;
  model?: string;
  runTimeoutSeconds?: number;
  /** "fork": the child starts with this conversation as background (default "isolated"). */
  context?: "isolated" | "fork";
}

export type SpawnAnswer =
  | { status: "accepted"; runId: string; childSessionKey: string; resolvedModel?: string }
  | { status: "refused"; error: string };

export interface ChildView {
  childSessionKey: string;
  runId: string;
  agentId: string;
  label?: string;
  taskName?: string;
  task: string;
  state: "starting" | "running" | "ended";
  outcome?: string;
  result?: string;
  startedAt: string;
  endedAt?: string;
  runtimeMs?: number;
}

export interface SessionListRow {
  sessionKey: string;
  agentId: string;
  kind: string;
  channel?: string;
  chatType?: string;
  updatedAt: string;
  parentSessionKey?: string;
}

export interface SessionListAnswer {
  sessions: SessionListRow[];
  visibility: { mode: string; restricted?: string };
}

export interface HistoryAnswer {
  sessionKey: string;
  messages: Array<{ role: "user" | "assistant"; text: string; at: string }>;
  truncated: boolean;
  contentRedacted: boolean;
}

/** A `message` send: the conversation (a session key, or a channel and a raw target) and what to send. */
export interface MessageRequest {
  sessionKey?: string;
  channel?: string;
  target?: string;
  accountId?: string;
  text?: string;
  /** Workspace paths of files to send after the text. */
  files: string[];
}

export interface SessionToolsHost {
  /** This session's key and how deep it was spawned (0: nobody spawned it). */
  sessionKey: string;
  depth: number;
  /** A child's prompt context (who spawned it, what its reply is for): the "Subagent Context". */
  childContext?: string;
  spawn(request: SpawnRequest, toolCallId: string): Promise<SpawnAnswer>;
  children(): ChildView[];
  /** Stops a child (its run is aborted; it still reports once). */
  kill(target: string): Promise<string>;
  list(filter: {
    kinds?: string[];
    limit: number;
    activeMinutes?: number;
  }): Promise<SessionListAnswer>;
  history(sessionKey: string, limit: number): Promise<HistoryAnswer | { error: string }>;
  /** `timeoutSeconds` > 0: wait that long for the target's reply (0: fire and forget). */
  send(
    sessionKey: string,
    message: string,
    toolCallId: string,
    timeoutSeconds?: number,
  ): Promise<string>;
  /** The message tool: text and files into another conversation, through that session's outbox. */
  message(request: MessageRequest, toolCallId: string): Promise<string>;
}
