import * as z from "zod";

/**
 * The sandbox protocol: what the Worker asks a sandbox host to do, and what it answers. One
 * protocol for every backend — the companion (signed `POST /v1/sandbox`, commands in bubblewrap)
 * and the Cloudflare Container (the sandbox Durable Object forwards the same body to the host
 * process inside the container) — so the session side has one code path. Every exec is keyed by
 * `execId` (derived from the model's tool-call id): a host that already knows an id never starts
 * it again, and `resume: true` asks for the status only, so a start whose fate is unknown is never
 * repeated.
 */

const scope = z.string().min(1).max(300);
const execId = z.string().regex(/^[A-Za-z0-9_.:-]{1,200}$/);

export const syncFileSchema = z.object({
  path: z.string().min(1).max(512),
  content: z.string(),
  version: z.number().int().nonnegative(),
});
export type SyncFile = z.infer<typeof syncFileSchema>;

export const startOpSchema = z.object({
  op: z.literal("start"),
  scope,
  execId,
  command: z.string().min(1).max(100_000),
  /** Relative to /workspace. */
  workdir: z.string().max(512).default(""),
  env: z.record(z.string(), z.string()).default({}),
  timeoutSeconds: z.number().int().nonnegative(),
  /** How long the host waits for the command before answering "running". */
  waitMs: z.number().int().nonnegative().max(120_000),
  network: z.boolean().default(false),
  /**
   * With network: the only hosts a command may reach (globs; agents.defaults.sandbox.docker
   * .allowedHosts). Empty: every host. The container enforces it at its egress; the companion
   * gives such a command no network of its own and its egress proxy, which admits only these
   * hosts (companion/src/sandbox/egress-proxy.ts).
   */
  allowedHosts: z.array(z.string().min(1).max(253)).max(100).default([]),
  /** "bwrap": bubblewrap (the companion); "none": mode "off" or inside the container, which is the sandbox. */
  isolation: z.enum(["bwrap", "none"]),
  maxOutputChars: z.number().int().positive(),
  pendingMaxOutputChars: z.number().int().positive(),
  /** The workspace as Postgres has it (sync in); absent: workspaceAccess "none". */
  files: z.array(syncFileSchema).optional(),
  /** Send back what the command changed under /workspace when it ends (workspaceAccess "rw"). */
  syncBack: z.boolean().default(false),
  syncMaxFiles: z.number().int().positive(),
  syncMaxBytes: z.number().int().positive(),
  /** The first start already happened (or may have): report, never start. */
  resume: z.boolean().default(false),
  setupCommand: z.string().optional(),
  /** Run under a pseudo-terminal (the host refuses when it cannot give one). */
  pty: z.boolean().default(false),
});

export const sandboxOpSchema = z.discriminatedUnion("op", [
  startOpSchema,
  z.object({
    op: z.literal("poll"),
    scope,
    execId,
    waitMs: z.number().int().nonnegative().max(30_000).default(0),
    /** Characters of output the caller has already seen (poll returns what came after). */
    offset: z.number().int().nonnegative().default(0),
  }),
  z.object({
    op: z.literal("log"),
    scope,
    execId,
    /** Line-based, as OpenClaw's process log. */
    offset: z.number().int().nonnegative().optional(),
    limit: z.number().int().positive().optional(),
  }),
  z.object({
    op: z.literal("write"),
    scope,
    execId,
    data: z.string().max(1_000_000),
    eof: z.boolean().default(false),
  }),
  z.object({
    op: z.literal("kill"),
    scope,
    execId,
    signal: z.enum(["SIGTERM", "SIGKILL", "SIGINT"]).default("SIGKILL"),
  }),
  z.object({ op: z.literal("probe"), isolation: z.enum(["bwrap", "none"]) }),
  /** For operators (`edgeclaw status`): whether bubblewrap works here and what runs now. */
  z.object({ op: z.literal("status") }),
]);
export type SandboxOp = z.infer<typeof sandboxOpSchema>;
export type SandboxOpInput = z.input<typeof sandboxOpSchema>;
export type StartOp = z.infer<typeof startOpSchema>;

export const fileChangeSchema = z.object({
  path: z.string(),
  /** null: deleted in the sandbox. */
  content: z.string().nullable(),
  /** The version the host synced in (0: created by the command). */
  baseVersion: z.number().int().nonnegative(),
});
export type FileChange = z.infer<typeof fileChangeSchema>;

export const execStatusSchema = z.object({
  execId: z.string(),
  /** unknown: the host has no record (a resume of a start that never arrived, or a wiped host). */
  state: z.enum(["running", "exited", "lost", "unknown"]),
  exitCode: z.number().int().nullable().default(null),
  signal: z.string().nullable().default(null),
  timedOut: z.boolean().default(false),
  startedAt: z.number().nullable().default(null),
  finishedAt: z.number().nullable().default(null),
  /** The output asked for: the tail (start), what came after `offset` (poll). */
  output: z.string().default(""),
  /** Characters of output kept so far, and dropped past maxOutputChars. */
  outputChars: z.number().int().nonnegative().default(0),
  droppedChars: z.number().int().nonnegative().default(0),
  /** Output left out of `output` (older than the tail shown). */
  omittedChars: z.number().int().nonnegative().default(0),
  /** Files the command changed (exited, syncBack): the session commits them to Postgres. */
  changes: z.array(fileChangeSchema).optional(),
  /** Files over the sync bounds or not UTF-8 text: not brought back, said so. */
  skipped: z.array(z.string()).optional(),
  /** Wall time of the sandbox start (bubblewrap / setup) for this exec, ms. */
  sandboxStartMs: z.number().optional(),
});
export type ExecStatus = z.infer<typeof execStatusSchema>;

/** A status that knows nothing beyond its state (no record, lost): every other field at its default. */
export function bareExecStatus(execId: string, state: ExecStatus["state"]): ExecStatus {
  return {
    execId,
    state,
    exitCode: null,
    signal: null,
    timedOut: false,
    startedAt: null,
    finishedAt: null,
    output: "",
    outputChars: 0,
    droppedChars: 0,
    omittedChars: 0,
  };
}

export const logAnswerSchema = z.object({
  execId: z.string(),
  lines: z.array(z.string()),
  /** 0-based first line shown, total lines kept. */
  offset: z.number().int().nonnegative(),
  totalLines: z.number().int().nonnegative(),
  state: z.enum(["running", "exited", "lost", "unknown"]),
  exitCode: z.number().int().nullable(),
});
export type LogAnswer = z.infer<typeof logAnswerSchema>;

export const probeAnswerSchema = z.object({
  ok: z.boolean(),
  isolation: z.enum(["bwrap", "none"]),
  detail: z.string(),
  startMs: z.number().optional(),
});
export type ProbeAnswer = z.infer<typeof probeAnswerSchema>;

export const hostStatusSchema = z.object({
  /** Whether bubblewrap can create its sandbox on this host (the probe's answer). */
  bwrap: z.object({ ok: z.boolean(), detail: z.string(), startMs: z.number().optional() }),
  /** Whether pty: true can be honoured here (util-linux's script). */
  pty: z.boolean(),
  running: z.array(
    z.object({
      scope: z.string(),
      execId: z.string(),
      command: z.string(),
      startedAt: z.number(),
      timeoutSeconds: z.number(),
      pty: z.boolean(),
    }),
  ),
});
export type HostStatus = z.infer<typeof hostStatusSchema>;

/** Errors a host answers with (HTTP 4xx/5xx body). */
export const hostErrorSchema = z.object({ error: z.string(), code: z.string() });
