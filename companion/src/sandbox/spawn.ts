import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { StartOp } from "../../../functions/sandbox/wire.ts";
import { bwrapArgs, type SandboxBind } from "./bwrap.ts";

/**
 * How one command is started: in bubblewrap (the companion) or directly (the sandbox container,
 * or mode "off"), with a clean environment, and — for `pty: true` — under a pseudo-terminal.
 *
 * The pty is util-linux's `script` (in Debian's essential set, so in the host's /usr that bubblewrap
 * binds and in the sandbox image): `script -q -e -f -c …` gives the command a tty on stdin, stdout
 * and stderr inside the sandbox (bubblewrap's fresh /dev has its own /dev/pts), forwards what
 * `process write`/`send-keys` send to it as keystrokes (Ctrl-C becomes SIGINT through the line
 * discipline) and returns the command's exit code. A 120×40 window, TERM xterm-256color unless the
 * call sets TERM. The command text reaches the inner shell through the environment, never
 * re-quoted.
 */

const PTY_SHELL = 'stty cols 120 rows 40 2>/dev/null; eval "$EDGECLAW_PTY_COMMAND"';

/** Whether `pty: true` can be honoured here (checked before a start is recorded). */
export function ptyAvailable(): boolean {
  return ["/usr/bin/script", "/bin/script"].some((path) => existsSync(path));
}

export const PTY_UNAVAILABLE =
  "pty: true needs util-linux's `script` in the sandbox, which is not installed here; run the command without pty";

export function spawnSandboxed(
  op: StartOp,
  command: string,
  workspaceDir: string,
  workdir: string,
  binds: readonly SandboxBind[] = [],
  /** The egress proxy's socket when the command may reach only allowedHosts (egress-proxy.ts). */
  egressSocket?: string,
): ChildProcess {
  const env: Record<string, string> = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: "/workspace",
    LANG: "C.UTF-8",
    TMPDIR: "/tmp",
    OPENCLAW_SHELL: "exec",
    ...op.env,
  };
  let line = command;
  if (op.pty) {
    env.TERM ??= "xterm-256color";
    env.SHELL = "/bin/sh";
    env.EDGECLAW_PTY_COMMAND = command;
    line = `exec script -q -e -f -c '${PTY_SHELL}' /dev/null`;
  }
  if (op.isolation === "bwrap") {
    return spawn(
      "bwrap",
      bwrapArgs({
        workspaceDir,
        workdir,
        env,
        network: op.network,
        command: line,
        binds,
        ...(egressSocket ? { egressSocket } : {}),
      }),
      { stdio: ["pipe", "pipe", "pipe"] },
    );
  }
  return spawn("/bin/sh", ["-lc", line], {
    cwd: workdir ? join(workspaceDir, workdir) : workspaceDir,
    env: { ...env, HOME: workspaceDir },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
}

export function killTree(child: ChildProcess, signal: NodeJS.Signals): void {
  if (!child.pid) return;
  try {
    // bwrap: killing it ends its pid namespace (its init), so everything inside dies. Without
    // bwrap the command leads its own process group (under a pty, `script` puts the command in a
    // session of its own, which gets SIGHUP when the pty closes).
    if (child.spawnargs[0] === "bwrap") child.kill(signal);
    else process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** A terminal's CRLF line ends as LF (so `process log` lines are lines), across chunk boundaries. */
export function crlfToLf(): (text: string) => string {
  let pendingCr = false;
  return (text) => {
    let input = text;
    if (pendingCr) input = `\r${input}`;
    pendingCr = input.endsWith("\r");
    if (pendingCr) input = input.slice(0, -1);
    return input.replace(/\r\n/g, "\n");
  };
}
