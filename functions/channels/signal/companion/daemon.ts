import { spawn, type ChildProcess } from "node:child_process";
import type { SignalRpc } from "./rpc.ts";

/**
 * transport.kind "managed-native": the companion runs signal-cli's daemon itself, as a child
 * process bound to loopback —
 * `signal-cli [--config DIR] daemon --http HOST:PORT --receive-mode manual --no-receive-stdout
 * [--ignore-stories] [--ignore-attachments]` — multi-account (no `-a`), so every call names its
 * account and a wrong number is refused by name. `--receive-mode manual`: nothing is received
 * until the connector asks (`receive`), so no message is taken off the Signal server while nobody
 * is there to store it. start() waits for `GET /api/v1/check` up to `startupTimeoutMs` (a JVM
 * build takes seconds); an exit later is noticed by the connector's next call failing, and the
 * connector calls start() again after its backoff. signal-cli's own log (stderr) is passed on by
 * line, capped, never parsed.
 */
export interface ManagedDaemonSettings {
  cliPath: string;
  configPath?: string;
  httpHost: string;
  httpPort: number;
  startupTimeoutMs: number;
  ignoreStories: boolean;
  ignoreAttachments: boolean;
}

export class ManagedDaemon {
  private child: ChildProcess | undefined;
  private exited: string | undefined;

  constructor(
    private readonly settings: ManagedDaemonSettings,
    private readonly rpc: SignalRpc,
    private readonly log: (level: "info" | "warn", message: string, fields?: object) => void,
  ) {}

  /** The command line (for the log and the docs): never a secret, signal-cli takes none. */
  args(): string[] {
    const s = this.settings;
    return [
      ...(s.configPath ? ["--config", s.configPath] : []),
      "daemon",
      "--http",
      `${s.httpHost}:${s.httpPort}`,
      "--receive-mode",
      "manual",
      "--no-receive-stdout",
      ...(s.ignoreStories ? ["--ignore-stories"] : []),
      ...(s.ignoreAttachments ? ["--ignore-attachments"] : []),
    ];
  }

  /** Starts the daemon unless it runs; resolves once it answers /api/v1/check, throws when it does not in time. */
  async start(signal: AbortSignal): Promise<void> {
    if (await this.rpc.check(signal)) {
      // Ours still running, or one a previous companion process left (a SIGKILL leaves its child).
      if (!this.child)
        this.log("info", "a signal-cli daemon already answers; using it", { url: this.rpc.url });
      return;
    }
    this.stop();
    this.exited = undefined;
    const child = spawn(this.settings.cliPath, this.args(), {
      stdio: ["ignore", "ignore", "pipe"],
    });
    this.child = child;
    let lines = 0;
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      for (const line of chunk.split("\n"))
        if (line.trim() && lines++ < 200)
          this.log("info", "signal-cli", { line: line.slice(0, 500) });
    });
    child.once("error", (error) => (this.exited = `could not start: ${error.message}`));
    child.once("exit", (code, how) => {
      this.exited = `exited (${how ?? `code ${code}`})`;
      this.log("warn", "signal-cli daemon stopped", { reason: this.exited });
    });
    const deadline = Date.now() + this.settings.startupTimeoutMs;
    while (!signal.aborted) {
      if (this.exited)
        throw new Error(`signal-cli daemon ${this.exited} (${this.settings.cliPath})`);
      if (await this.rpc.check(signal)) {
        this.log("info", "signal-cli daemon ready", { pid: child.pid, url: this.rpc.url });
        return;
      }
      if (Date.now() > deadline)
        throw new Error(
          `signal-cli daemon did not answer /api/v1/check within ${this.settings.startupTimeoutMs} ms (transport.startupTimeoutMs)`,
        );
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  stop(): void {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  }
}
