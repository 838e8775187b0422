import type { LogAnswer } from "./wire.ts";

/**
 * What the `exec` and `process` tools may ask of the session they run in
 * (durable-objects/session/exec-step.ts implements it on the session's SQLite). The tools parse and
 * format; the host keeps the record that makes a command run once, syncs the workspace, waits at
 * most `yieldMs`, and leaves longer commands to finish in the background.
 */
export interface ExecStartInput {
  /** The model's tool-call id: the key that makes a resumed call read its record instead of running again. */
  callId: string;
  command: string;
  workdir: string;
  env: Record<string, string>;
  yieldMs: number;
  background: boolean;
  timeoutSeconds: number;
  /** Under a pseudo-terminal (OpenClaw's pty). */
  pty: boolean;
  /** The approval decision already taken for it (approval.ts). */
  needsApproval: { reason: string } | undefined;
}

export type ExecViewState =
  | "approval-pending"
  | "running"
  | "exited"
  | "lost"
  | "denied"
  | "unknown";

export interface ExecView {
  /** What `process` names it by (the exec's tool-call id). */
  id: string;
  command: string;
  state: ExecViewState;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** The output shown: the retained tail, or what is new since the last poll. */
  output: string;
  omittedChars: number;
  droppedChars: number;
  durationMs: number | null;
  background: boolean;
  /** Workspace files brought back from the sandbox, and why some were not. */
  written: string[];
  conflicts: string[];
  skipped: string[];
  approvalReason?: string;
  killedByStop?: boolean;
}

export interface ExecHost {
  start(input: ExecStartInput): Promise<ExecView>;
  poll(id: string, waitMs: number): Promise<ExecView | undefined>;
  log(id: string, offset?: number, limit?: number): Promise<LogAnswer | undefined>;
  write(id: string, data: string, eof: boolean): Promise<ExecView | undefined>;
  kill(id: string): Promise<ExecView | undefined>;
  list(): Promise<ExecView[]>;
  /** Forgets a finished command (clear); remove kills it first if it still runs. */
  clear(id: string, killFirst: boolean): Promise<"cleared" | "running" | "missing">;
}
