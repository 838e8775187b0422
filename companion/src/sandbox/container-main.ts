import { startSandboxServer } from "./server.ts";
import type { HostLog } from "./host.ts";

/**
 * The sandbox image's one process (sandbox/Dockerfile): the companion's sandbox host, serving the
 * Worker's sandbox protocol (functions/sandbox/wire.ts) on EDGECLAW_SANDBOX_PORT for the sandbox
 * Durable Object of one scope (durable-objects/sandbox.ts), which is the only thing that can reach
 * a Cloudflare Container's ports. So requests are not signed and the process holds no secret.
 *
 * Commands run without bubblewrap (isolation "none"): the container is the boundary (its own VM,
 * one per scope, egress decided by the Durable Object), it runs as the image's non-root user, and
 * the Durable Object keeps its own record of every exec id, so what a command does to this
 * process or its records on disk can neither reach another scope nor make a command run twice.
 *
 * Locally and in the tests it runs as a plain node process with the paths moved (env below).
 */
const port = Number(process.env.EDGECLAW_SANDBOX_PORT ?? "8080");
const workspaceDir = process.env.EDGECLAW_SANDBOX_WORKSPACE ?? "/workspace";
const stateDir = process.env.EDGECLAW_SANDBOX_STATE ?? "/home/sandbox/.edgeclaw-sandbox";

const log: HostLog = (level, message, fields) => {
  const line = JSON.stringify({ at: new Date().toISOString(), level, message, ...fields });
  (level === "info" ? process.stdout : process.stderr).write(`${line}\n`);
};

const running = await startSandboxServer({
  root: stateDir,
  keys: [],
  unsigned: true,
  host: process.env.EDGECLAW_SANDBOX_HOST ?? "0.0.0.0",
  port,
  workspaceDir,
  log,
});
log("info", "sandbox host listening", { port: running.port, workspace: workspaceDir });

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    // The container is stopping: its commands go with it (the Durable Object reports them lost).
    void running.stop().finally(() => process.exit(0));
  });
}
