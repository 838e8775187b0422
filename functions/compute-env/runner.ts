import type { EdgeclawConfig } from "../config/schema.ts";
import type { ComputeEnvConfig } from "../config/compute-env-schema.ts";
import { SandboxError, sandboxBackend } from "../sandbox/backend.ts";
import { sandboxConfigFor, sandboxPlacement } from "../sandbox/placement.ts";
import { execStatusSchema, type ExecStatus } from "../sandbox/wire.ts";

/**
 * Runs the computing environment's own conda commands (dry-runs, installs, lists, detection) where
 * the agent's commands run: the sandbox of the session (or of the agent's main session for the
 * CLI and the control page), over the same sandbox protocol as exec. Each command is keyed by a
 * step id derived from the install's record id: the sandbox host never starts a known id twice, so
 * a caller that asks again after a crash gets the first command's status and never a second run.
 * These commands bypass the exec approval policy (the cascade decides what they are) and see no
 * workspace.
 */
export interface CondaRun {
  state: ExecStatus["state"];
  exitCode: number | null;
  timedOut: boolean;
  output: string;
}

export interface CondaRunner {
  run(
    stepId: string,
    command: string,
    options?: { network?: boolean; timeoutSeconds?: number },
  ): Promise<CondaRun>;
  /** Whether commands may reach the network here (placement and docker.network), and which hosts. */
  readonly network: { allowed: boolean; allowedHosts: readonly string[] };
}

/** Output one conda answer may carry (a `conda list --json` of a big env is ~100 KB). */
const MAX_OUTPUT = 200_000;

/** PATH inside the sandbox: tools.exec.pathPrepend first (honoured as for exec), then conda's bin. */
export function condaPath(config: EdgeclawConfig, computeEnv: ComputeEnvConfig): string {
  return [
    ...config.tools.exec.pathPrepend,
    `${computeEnv.condaPrefix}/bin`,
    "/usr/local/bin",
    "/usr/bin",
    "/bin",
  ].join(":");
}

export function sandboxRunner(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
  agentId: string,
  sessionKey: string,
  computeEnv: ComputeEnvConfig,
): CondaRunner {
  const placement = sandboxPlacement(config, agentId, sessionKey);
  if (!placement)
    throw new SandboxError(
      "refused",
      `agent "${agentId}" has no sandbox (agents.defaults.sandbox.backend)`,
    );
  const sandbox = sandboxConfigFor(config, agentId);
  const backend = sandboxBackend(placement.backend, config.companion, env, placement.scope);
  return {
    network: { allowed: placement.network, allowedHosts: sandbox.docker.allowedHosts },
    async run(stepId, command, options = {}) {
      const timeoutSeconds = options.timeoutSeconds ?? computeEnv.installTimeoutSeconds;
      const execId = `env:${stepId}`.replace(/[^A-Za-z0-9_.:-]/g, "-").slice(0, 200);
      const network = Boolean(options.network) && placement.network;
      let status = await backend.call(
        {
          op: "start",
          scope: placement.scope,
          execId,
          command,
          workdir: "",
          env: { PATH: condaPath(config, computeEnv) },
          timeoutSeconds,
          waitMs: Math.min(120_000, timeoutSeconds * 1000),
          network,
          allowedHosts: network ? sandbox.docker.allowedHosts : [],
          isolation: placement.isolation,
          maxOutputChars: MAX_OUTPUT,
          pendingMaxOutputChars: MAX_OUTPUT,
          syncBack: false,
          syncMaxFiles: sandbox.sync.maxFiles,
          syncMaxBytes: sandbox.sync.maxBytes,
          resume: false,
        },
        execStatusSchema,
      );
      let output = status.output;
      let seen = status.outputChars;
      // Long solves and installs: keep asking (each poll waits up to 30 s) until the host's own
      // timeout has killed it, plus slack for the kill to be reported.
      const deadline = Date.now() + (timeoutSeconds + 60) * 1000;
      while (status.state === "running" && Date.now() < deadline) {
        status = await backend.call(
          { op: "poll", scope: placement.scope, execId, waitMs: 30_000, offset: seen },
          execStatusSchema,
        );
        output += status.output;
        seen += status.output.length;
      }
      return { state: status.state, exitCode: status.exitCode, timedOut: status.timedOut, output };
    },
  };
}
