import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  bareExecStatus,
  type ExecStatus,
  type HostStatus,
  type LogAnswer,
  type ProbeAnswer,
  type SandboxOp,
  type StartOp,
} from "../../../functions/sandbox/wire.ts";
import { probeBwrap, type SandboxBind } from "./bwrap.ts";
import { crlfToLf, killTree, PTY_UNAVAILABLE, ptyAvailable, spawnSandboxed } from "./spawn.ts";
import { scanChanges, syncIn } from "./workspace-sync.ts";
import { startEgressProxy } from "./egress-proxy.ts";

/**
 * A sandbox host: runs the Worker's commands, one workspace per scope, and keeps every exec's
 * record on disk so its answer survives this process. The record (request.json) is written before
 * the command is spawned and the exit (exit.json, with what it changed) right after it ends; an id
 * with a record is never started again. A record without an exit and without a live process is a
 * command this host lost when it died (--die-with-parent took the command with it): it is reported
 * "lost", once and for good, never re-run.
 *
 * The same class runs in the companion (isolation "bwrap") and inside the sandbox container image
 * (isolation "none": the container is the sandbox).
 */

interface Live {
  op: StartOp;
  startedAt: number;
  child: ChildProcess;
  outChars: number;
  dropped: number;
  exited: Promise<void>;
  timedOut: boolean;
  killedBy?: string;
}

interface ExitRecord {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  finishedAt: number;
  lost?: boolean;
  outChars: number;
  dropped: number;
  changes?: ExecStatus["changes"];
  skipped?: string[];
}

interface StartRecord {
  op: StartOp;
  startedAt: number;
}

export type HostLog = (
  level: "info" | "warn" | "error",
  message: string,
  fields?: Record<string, unknown>,
) => void;

export interface SandboxHostOptions {
  /**
   * One fixed workspace for every scope (the sandbox container: one container per scope, its
   * workspace at /workspace as the commands see it). Unset: one workspace per scope under `root`
   * (the companion, which serves many scopes and binds each at /workspace with bubblewrap).
   */
  workspaceDir?: string;
  /** Host directories every bubblewrap command sees (conda-bind.ts: a host conda installation). */
  binds?: readonly SandboxBind[];
}

export class SandboxHost {
  private readonly live = new Map<string, Live>();

  constructor(
    private readonly root: string,
    private readonly log: HostLog,
    private readonly options: SandboxHostOptions = {},
  ) {
    mkdirSync(root, { recursive: true });
  }

  async handle(op: SandboxOp): Promise<ExecStatus | LogAnswer | ProbeAnswer | HostStatus> {
    switch (op.op) {
      case "probe":
        return this.probe(op.isolation);
      case "status":
        return this.describe();
      case "start":
        return this.start(op);
      case "poll":
        return this.status(op.scope, op.execId, { waitMs: op.waitMs, offset: op.offset });
      case "log":
        return this.logLines(op.scope, op.execId, op.offset, op.limit);
      case "write": {
        const live = this.live.get(this.key(op.scope, op.execId));
        if (live?.child.stdin?.writable) {
          live.child.stdin.write(op.data);
          if (op.eof) live.child.stdin.end();
        }
        return this.status(op.scope, op.execId, { waitMs: 0 });
      }
      case "kill": {
        const live = this.live.get(this.key(op.scope, op.execId));
        if (live) {
          live.killedBy = op.signal;
          killTree(live.child, op.signal);
          await Promise.race([live.exited, delay(5_000)]);
        }
        return this.status(op.scope, op.execId, { waitMs: 0 });
      }
    }
  }

  probe(isolation: "bwrap" | "none"): ProbeAnswer {
    if (isolation === "none")
      return {
        ok: true,
        isolation,
        detail: 'commands run without bubblewrap (the host is the sandbox, or mode "off")',
      };
    const probe = probeBwrap();
    return { ok: probe.ok, isolation, detail: probe.detail, startMs: probe.startMs };
  }

  /** What operators see of this host: bubblewrap's state and the commands running now. */
  describe(): HostStatus {
    const probe = probeBwrap();
    return {
      bwrap: { ok: probe.ok, detail: probe.detail, startMs: probe.startMs },
      pty: ptyAvailable(),
      running: [...this.live.values()].map((live) => ({
        scope: live.op.scope,
        execId: live.op.execId,
        command: live.op.command.slice(0, 500),
        startedAt: live.startedAt,
        timeoutSeconds: live.op.timeoutSeconds,
        pty: live.op.pty,
      })),
    };
  }

  private scopeDir(scope: string): string {
    return join(this.root, createHash("sha256").update(scope).digest("hex").slice(0, 24));
  }

  private execDir(scope: string, execId: string): string {
    return join(
      this.scopeDir(scope),
      "execs",
      createHash("sha256").update(execId).digest("hex").slice(0, 32),
    );
  }

  private key(scope: string, execId: string): string {
    return `${scope}\u0000${execId}`;
  }

  private async start(op: StartOp): Promise<ExecStatus> {
    const dir = this.execDir(op.scope, op.execId);
    if (existsSync(join(dir, "request.json")) || op.resume)
      return this.status(op.scope, op.execId, { waitMs: op.waitMs });
    if (op.pty && !ptyAvailable()) throw new SandboxInputError(PTY_UNAVAILABLE);
    if (op.isolation === "bwrap") {
      const probe = probeBwrap();
      if (!probe.ok) throw new SandboxUnavailableError(probe.detail);
    }
    const scopeDir = this.scopeDir(op.scope);
    const workspaceDir = this.options.workspaceDir ?? join(scopeDir, "workspace");
    mkdirSync(scopeDir, { recursive: true });
    mkdirSync(workspaceDir, { recursive: true });
    if (op.files) syncIn(scopeDir, workspaceDir, op.files);
    const workdir = checkWorkdir(op.workdir);
    if (workdir && !existsSync(join(workspaceDir, workdir)))
      mkdirSync(join(workspaceDir, workdir), { recursive: true });
    // Recorded before the spawn: from here on this id is never started again.
    mkdirSync(dir, { recursive: true });
    const record: StartRecord = { op: { ...op, files: undefined }, startedAt: Date.now() };
    writeFileSync(join(dir, "request.json"), JSON.stringify(record));
    writeFileSync(join(dir, "out"), "");
    // Network limited to the operator's hosts: bubblewrap shares none, the proxy is the way out.
    const egress =
      op.network && op.allowedHosts.length && op.isolation === "bwrap"
        ? await startEgressProxy(op.allowedHosts, (message, fields) =>
            this.log("warn", message, { ...fields, scope: op.scope, execId: op.execId }),
          )
        : undefined;
    if (op.setupCommand && !existsSync(join(scopeDir, "setup.done"))) {
      const setup = spawnSandboxed(
        { ...op, pty: false },
        op.setupCommand,
        workspaceDir,
        "",
        this.options.binds,
        egress?.socketPath,
      );
      const code = await new Promise<number | null>((resolve) => setup.once("close", resolve));
      writeFileSync(join(scopeDir, "setup.done"), String(code));
    }
    const child = spawnSandboxed(
      op,
      op.command,
      workspaceDir,
      workdir,
      this.options.binds,
      egress?.socketPath,
    );
    if (egress) child.once("close", () => egress.close());
    const live: Live = {
      op: { ...op, files: undefined },
      startedAt: record.startedAt,
      child,
      outChars: 0,
      dropped: 0,
      timedOut: false,
      exited: Promise.resolve(),
    };
    const outFile = join(dir, "out");
    const fromTerminal = op.pty ? crlfToLf() : (text: string) => text;
    const onData = (chunk: Buffer) => {
      const text = fromTerminal(chunk.toString("utf8"));
      const room = op.maxOutputChars - live.outChars;
      if (room <= 0) {
        live.dropped += text.length;
        return;
      }
      const kept = text.slice(0, room);
      appendFileSync(outFile, kept);
      live.outChars += kept.length;
      live.dropped += text.length - kept.length;
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    const timer =
      op.timeoutSeconds > 0
        ? setTimeout(() => {
            live.timedOut = true;
            killTree(child, "SIGKILL");
          }, op.timeoutSeconds * 1000)
        : undefined;
    live.exited = new Promise<void>((resolve) => {
      child.once("close", (code, signal) => {
        if (timer) clearTimeout(timer);
        const exit: ExitRecord = {
          exitCode: code,
          signal: signal ?? live.killedBy ?? null,
          timedOut: live.timedOut,
          finishedAt: Date.now(),
          outChars: live.outChars,
          dropped: live.dropped,
        };
        if (op.syncBack) {
          const scan = scanChanges(scopeDir, workspaceDir, {
            maxFiles: op.syncMaxFiles,
            maxBytes: op.syncMaxBytes,
          });
          exit.changes = scan.changes;
          exit.skipped = scan.skipped;
        }
        writeFileSync(join(dir, "exit.json"), JSON.stringify(exit));
        this.live.delete(this.key(op.scope, op.execId));
        resolve();
      });
      child.once("error", (error) => {
        appendFileSync(outFile, `\n[could not start: ${error.message}]\n`);
      });
    });
    this.live.set(this.key(op.scope, op.execId), live);
    this.log("info", "sandbox exec started", {
      scope: op.scope,
      execId: op.execId,
      pid: child.pid,
    });
    return this.status(op.scope, op.execId, { waitMs: op.waitMs });
  }

  private async status(
    scope: string,
    execId: string,
    options: { waitMs: number; offset?: number },
  ): Promise<ExecStatus> {
    const dir = this.execDir(scope, execId);
    const requestFile = join(dir, "request.json");
    if (!existsSync(requestFile)) return bareExecStatus(execId, "unknown");
    const live = this.live.get(this.key(scope, execId));
    if (live && options.waitMs > 0) await Promise.race([live.exited, delay(options.waitMs)]);
    const record = JSON.parse(readFileSync(requestFile, "utf8")) as StartRecord;
    let exit = readJson<ExitRecord>(join(dir, "exit.json"));
    if (!exit && !this.live.has(this.key(scope, execId))) {
      // Recorded, never finished, not running here: this host died while it ran.
      exit = {
        exitCode: null,
        signal: null,
        timedOut: false,
        finishedAt: Date.now(),
        lost: true,
        outChars: 0,
        dropped: 0,
      };
      writeFileSync(join(dir, "exit.json"), JSON.stringify(exit));
    }
    const out = readFileSync(join(dir, "out"), "utf8");
    const limit = record.op.pendingMaxOutputChars;
    let output: string;
    let omitted: number;
    if (options.offset !== undefined && options.offset > 0) {
      const after = out.slice(options.offset);
      output = after.slice(0, limit);
      omitted = after.length - output.length;
    } else {
      output = out.length > limit ? out.slice(-limit) : out;
      omitted = out.length - output.length;
    }
    const current = this.live.get(this.key(scope, execId));
    return {
      execId,
      state: exit ? (exit.lost ? "lost" : "exited") : "running",
      exitCode: exit?.exitCode ?? null,
      signal: exit?.signal ?? null,
      timedOut: exit?.timedOut ?? current?.timedOut ?? false,
      startedAt: record.startedAt,
      finishedAt: exit?.finishedAt ?? null,
      output,
      outputChars: out.length,
      droppedChars: exit?.dropped ?? current?.dropped ?? 0,
      omittedChars: omitted,
      ...(exit?.changes ? { changes: exit.changes } : {}),
      ...(exit?.skipped?.length ? { skipped: exit.skipped } : {}),
    };
  }

  private async logLines(
    scope: string,
    execId: string,
    offset?: number,
    limit?: number,
  ): Promise<LogAnswer> {
    const status = await this.status(scope, execId, { waitMs: 0 });
    const dir = this.execDir(scope, execId);
    const out = existsSync(join(dir, "out")) ? readFileSync(join(dir, "out"), "utf8") : "";
    const lines = out.length ? out.replace(/\n$/, "").split("\n") : [];
    // OpenClaw: neither given → the last 200 lines; offset alone → to the end.
    const start = offset ?? Math.max(0, lines.length - (limit ?? 200));
    const end = limit !== undefined ? start + limit : lines.length;
    return {
      execId,
      lines: lines.slice(start, end),
      offset: start,
      totalLines: lines.length,
      state: status.state,
      exitCode: status.exitCode,
    };
  }

  /** Stops every running command (the host is shutting down). */
  stopAll(): void {
    for (const live of this.live.values()) killTree(live.child, "SIGKILL");
  }
}

export class SandboxUnavailableError extends Error {}

function checkWorkdir(workdir: string): string {
  const trimmed = workdir
    .replace(/^\/workspace\/?/, "")
    .replace(/^\.\/?/, "")
    .replace(/\/+$/, "");
  if (!trimmed) return "";
  if (trimmed.startsWith("/") || trimmed.split("/").some((part) => part === ".." || part === ""))
    throw new SandboxInputError(`workdir "${workdir}" must be a folder inside /workspace`);
  return trimmed;
}

export class SandboxInputError extends Error {}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return undefined;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
