import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { FORWARDER, NODE_PATH, proxyEnv, SOCKET_PATH } from "./egress-forwarder.ts";

/**
 * The bubblewrap command line of one sandboxed command: the host's /usr read-only (and the few /etc
 * files programs need), the scope's workspace writable at /workspace, a fresh /tmp, its own /proc
 * and /dev, every namespace unshared (user, pid, net, ipc, uts, cgroup: no network, no view of the
 * host's processes), a new session (no TIOCSTI into the caller's terminal), an empty environment
 * except what is passed, an unprivileged uid, and --die-with-parent: the command cannot outlive
 * the host process that started it.
 */

/** /etc entries read-only in the sandbox; nothing else of /etc (no shadow, no host config) is there. */
const ETC_ENTRIES = [
  "alternatives",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "ssl",
  "ca-certificates",
  "localtime",
  "nsswitch.conf",
  "passwd",
  "group",
  "mime.types",
];

export interface BwrapCommand {
  workspaceDir: string;
  /** Relative to /workspace, already checked. */
  workdir: string;
  env: Record<string, string>;
  network: boolean;
  command: string;
  /** Host directories bound in (a conda installation, read-write so the cascade can install). */
  binds?: readonly SandboxBind[];
  /**
   * Egress limited to allowedHosts (egress-proxy.ts): no network namespace shared, the proxy's
   * socket and the companion's node bound in, and the command started by the forwarder.
   */
  egressSocket?: string;
}

export interface SandboxBind {
  source: string;
  target: string;
  writable: boolean;
}

export function bwrapArgs(spec: BwrapCommand): string[] {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const dir of ["bin", "lib", "lib64", "sbin"])
    if (existsSync(`/${dir}`)) args.push("--symlink", `usr/${dir}`, `/${dir}`);
  for (const entry of ETC_ENTRIES)
    if (existsSync(`/etc/${entry}`)) args.push("--ro-bind", `/etc/${entry}`, `/etc/${entry}`);
  args.push(
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    "/var/tmp",
    "--bind",
    spec.workspaceDir,
    "/workspace",
    ...(spec.binds ?? []).flatMap((b) => [b.writable ? "--bind" : "--ro-bind", b.source, b.target]),
    ...(spec.egressSocket
      ? ["--ro-bind", process.execPath, NODE_PATH, "--bind", spec.egressSocket, SOCKET_PATH]
      : []),
    "--chdir",
    spec.workdir ? `/workspace/${spec.workdir}` : "/workspace",
    "--unshare-all",
    ...(spec.network && !spec.egressSocket ? ["--share-net"] : []),
    "--uid",
    "1000",
    "--gid",
    "1000",
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
  );
  const env = spec.egressSocket
    ? { ...spec.env, ...proxyEnv(), EDGECLAW_EGRESS_COMMAND: spec.command }
    : spec.env;
  for (const [name, value] of Object.entries(env)) args.push("--setenv", name, value);
  if (spec.egressSocket) args.push(NODE_PATH, "-e", FORWARDER);
  else args.push("/bin/sh", "-lc", spec.command);
  return args;
}

export interface BwrapProbe {
  ok: boolean;
  detail: string;
  startMs: number;
}

let cached: BwrapProbe | undefined;

/** Whether bubblewrap is installed and may create its namespaces here (AppArmor can refuse). */
export function probeBwrap(fresh = false): BwrapProbe {
  if (cached && !fresh) return cached;
  const started = performance.now();
  const result = spawnSync(
    "bwrap",
    bwrapArgs({
      workspaceDir: "/tmp",
      workdir: "",
      env: { PATH: "/usr/bin:/bin" },
      network: false,
      command: "true",
    }),
    { encoding: "utf8", timeout: 10_000 },
  );
  const startMs = Math.round(performance.now() - started);
  if (result.error) {
    const missing = (result.error as NodeJS.ErrnoException).code === "ENOENT";
    cached = {
      ok: false,
      startMs,
      detail: missing
        ? 'bubblewrap (bwrap) is not installed on the companion\'s machine: install it (Debian/Ubuntu: apt-get install bubblewrap), or set agents.defaults.sandbox.mode to "off" to run commands without a sandbox'
        : `bubblewrap could not start: ${result.error.message}`,
    };
  } else if (result.status !== 0) {
    cached = {
      ok: false,
      startMs,
      detail: `bubblewrap refused to create its sandbox (exit ${result.status}): ${result.stderr.trim().slice(0, 300)} — unprivileged user namespaces may be disabled (kernel.unprivileged_userns_clone, an AppArmor profile)`,
    };
  } else {
    cached = { ok: true, startMs, detail: "bubblewrap sandbox available" };
  }
  return cached;
}
