/**
 * What operators see of a session's sandbox (`npx edgeclaw sessions show`, the control page):
 * where its commands run, the commands it ran and runs, its metered sandbox time, and — for the
 * container backend — the state of the scope's container. Built by the SessionDO
 * (durable-objects/session/exec-report.ts), carried by GET /admin/sessions/:key.
 */
export interface SandboxCommandView {
  id: string;
  command: string;
  /** approval-pending | running | exited | lost | unknown | denied */
  state: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  background: boolean;
  startedAt: number;
  finishedAt: number | null;
  durationMs: number | null;
}

export interface SandboxUsageView {
  commands: number;
  seconds: number;
  containerSeconds: number;
  /** Container time at the instance type's list prices (container-prices.ts: an estimate). */
  estimatedUsd: number;
}

export interface SandboxContainerView {
  running: boolean;
  generation: number;
  egress: { kind: string; hosts?: string[] } | undefined;
  openExecs: number;
  awakeSince: number | null;
  awakeMsTotal: number;
  starts: number;
  sleepAfter: string;
}

export interface SandboxReport {
  placement: {
    backend: "companion" | "container";
    scope: string;
    network: boolean;
    sandboxed: boolean;
  } | null;
  commands: SandboxCommandView[];
  usage: SandboxUsageView;
  /** The scope's container (backend "container"); an error when it could not be asked. */
  container?: SandboxContainerView | { error: string };
}
