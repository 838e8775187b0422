import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import { resolveSecret, type SecretEnv } from "../../config/secret-ref.ts";
import type { AgentTool } from "../types.ts";
import { sandboxConfigFor } from "../../sandbox/placement.ts";
import {
  commandSegments,
  decideExec,
  effectivePolicy,
  execPolicyFor,
  withAskAlways,
} from "../../sandbox/approval.ts";
import { touchTrusted, trustedSegments } from "../../sandbox/trusted-commands.ts";
import type { DbEnv } from "../../db/client.ts";
import { SandboxError } from "../../sandbox/backend.ts";
import type { ExecView } from "../../sandbox/exec-host.ts";
import { ToolInputError, parseToolArgs } from "./common.ts";
import { condaPathEntries, condaWrapped } from "./exec-conda.ts";

/**
 * `exec` (tools__exec.md, gateway__background-process.md): runs a shell command in the session's
 * sandbox. It waits `yieldMs` (default tools.exec.backgroundMs, 10 s) and then leaves the command
 * running in the background (`status: running` + an id for `process`); `background: true` does so
 * at once. Offered only when agents.defaults.sandbox.backend is set; owner-only unless
 * tools.exec.allowNonOwners. Approvals: tools.exec.security / ask / mode (approval.ts).
 */
const argsSchema = z.object({
  command: z.string().min(1),
  workdir: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  yieldMs: z.number().int().nonnegative().optional(),
  background: z.boolean().optional(),
  timeoutSeconds: z.number().int().nonnegative().optional(),
  /** OpenClaw's older spelling. */
  timeout: z.number().int().nonnegative().optional(),
  pty: z.boolean().optional(),
  host: z.enum(["auto", "sandbox", "gateway", "node"]).optional(),
  security: z.enum(["deny", "allowlist", "full"]).optional(),
  ask: z.enum(["off", "on-miss", "always"]).optional(),
  elevated: z.boolean().optional(),
});

const BLOCKED_ENV = /^(PATH|LD_[A-Z_]*|DYLD_[A-Z_]*)$/;

export function createExecTool(config: EdgeclawConfig, agentId: string): AgentTool | null {
  if (!sandboxConfigFor(config, agentId).backend) return null;
  const exec = config.tools.exec;
  return {
    name: "exec",
    ownerOnly: !exec.allowNonOwners,
    description: [
      "Run a shell command (sh -lc) in this agent's sandbox, in /workspace (your workspace files are there; files the command writes come back to the workspace).",
      `It waits up to yieldMs (default ${exec.backgroundMs} ms) for the command; a longer one keeps running in the background and you get status "running" and an id for the process tool.`,
      "Use background: true to start long work at once; its end is reported to you when it finishes. Do not poll in a loop.",
      `timeoutSeconds (default ${exec.timeoutSeconds}, 0 = none) kills it. No network unless the operator allows it.`,
    ].join(" "),
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "Shell command to run" },
        workdir: { type: "string", description: "Working directory inside /workspace" },
        env: { type: "object", description: "Extra environment variables (string values)" },
        yieldMs: { type: "number", description: "Milliseconds to wait before backgrounding" },
        background: { type: "boolean", description: "Run in the background at once" },
        timeoutSeconds: { type: "number", description: "Kill after this many seconds (0: never)" },
        pty: {
          type: "boolean",
          description:
            "Run in a pseudo-terminal (TTY-only CLIs, terminal UIs); send keys with process send-keys",
        },
      },
      required: ["command"],
      additionalProperties: false,
    },
    async execute(rawArgs, ctx) {
      const args = parseToolArgs("exec", argsSchema, rawArgs);
      if (args.host === "gateway" || args.host === "node")
        throw new ToolInputError(
          `exec: host "${args.host}" is not available: commands run only in the sandbox (agents.defaults.sandbox)`,
        );
      if (args.elevated)
        throw new ToolInputError(
          "exec: elevated mode is not available: commands run only in the sandbox",
        );
      if (!ctx.exec)
        throw new ToolInputError(
          "exec: this session has no sandbox (agents.defaults.sandbox.backend is not set)",
        );
      const policy = execPolicyFor(ctx.config, ctx.agentId);
      const effective = args.ask === "always" ? withAskAlways(policy) : policy;
      const { security, ask } = effectivePolicy(effective);
      // allow-always entries matter only where the allowlist decides (and never under "always").
      const trusted =
        security === "allowlist" && ask !== "always"
          ? await trustedSegments(ctx.env as DbEnv, ctx.agentId)
          : [];
      const decision = decideExec(effective, args.command, trusted);
      if (decision.kind === "deny") throw new ToolInputError(`exec: refused: ${decision.reason}`);
      if (decision.kind === "run" && trusted.length)
        await touchTrusted(
          ctx.env as DbEnv,
          ctx.agentId,
          commandSegments(args.command) ?? [],
        ).catch(() => undefined);
      const env = sandboxEnv(ctx.config, ctx.env as SecretEnv, args.env ?? {}, ctx.agentId);
      const callId = ctx.toolCallId ?? crypto.randomUUID();
      // computeEnv: the command runs in its conda env (the approval above judged what the model wrote).
      const wrapped = await condaWrapped(ctx, args.command, callId);
      try {
        const view = await ctx.exec.start({
          callId,
          command: wrapped?.command ?? args.command,
          workdir: args.workdir ?? "",
          env,
          yieldMs: args.yieldMs ?? ctx.config.tools.exec.backgroundMs,
          background: args.background ?? false,
          timeoutSeconds:
            args.timeoutSeconds ?? args.timeout ?? ctx.config.tools.exec.timeoutSeconds,
          pty: args.pty ?? false,
          needsApproval: decision.kind === "ask" ? { reason: decision.reason } : undefined,
        });
        const result = formatExecView(view);
        if (!wrapped?.env) return result;
        return {
          ...result,
          content: `[conda env ${wrapped.env}: ${wrapped.reason}]\n${result.content}`,
        };
      } catch (error) {
        // Unreachable: the start may have arrived. The session keeps asking the sandbox about it
        // (exec-background.ts), so the model must not start it again under a new call.
        if (error instanceof SandboxError && error.code === "unreachable")
          return {
            content: `exec: ${error.message}. Whether the command started is not known: it is tracked (id ${callId}) and its end, or its loss, will be reported. Do not start it again.`,
            isError: true,
          };
        if (error instanceof SandboxError)
          return { content: `exec: ${error.message}`, isError: true };
        throw error;
      }
    },
  };
}

/**
 * What a command's environment holds: the variables the operator listed in
 * agents.defaults.sandbox.docker.env (the only way a secret gets in), PATH with
 * tools.exec.pathPrepend, and the call's own variables (never PATH or loader overrides).
 */
export function sandboxEnv(
  config: EdgeclawConfig,
  env: SecretEnv,
  callEnv: Record<string, string>,
  agentId?: string,
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.agents.defaults.sandbox.docker.env)) {
    const resolved = resolveSecret(value, env);
    if (resolved === undefined)
      throw new ToolInputError(
        `exec: agents.defaults.sandbox.docker.env.${name} names a secret that is not set`,
      );
    result[name] = resolved;
  }
  const prepend = [
    ...config.tools.exec.pathPrepend,
    ...(agentId ? condaPathEntries(config, agentId) : []),
  ];
  if (prepend.length) result.PATH = [...prepend, "/usr/local/bin", "/usr/bin", "/bin"].join(":");
  for (const [name, value] of Object.entries(callEnv)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new ToolInputError(`exec: "${name}" is not a valid environment variable name`);
    if (BLOCKED_ENV.test(name))
      throw new ToolInputError(`exec: env.${name} may not be overridden (binary hijacking)`);
    result[name] = value;
  }
  return result;
}

export function formatExecView(view: ExecView): { content: string; isError?: boolean } {
  const lines: string[] = [];
  const output = view.output.trimEnd();
  if (view.state === "approval-pending") {
    return {
      content: [
        `status: approval-pending (id ${view.id})`,
        `The command has NOT run: ${view.approvalReason ?? "it needs approval"}.`,
        `The owner approves it in this chat with: /approve ${view.id} allow-once (or allow-always to stop asking for this exact command, or deny). Its result is reported when it ends.`,
      ].join("\n"),
    };
  }
  if (view.state === "denied")
    return { content: `Denied (id ${view.id}): the command did not run.`, isError: true };
  if (view.omittedChars || view.droppedChars)
    lines.push(
      `[${view.omittedChars + view.droppedChars} earlier characters of output not shown${view.droppedChars ? `; ${view.droppedChars} dropped past tools.exec.maxOutputChars` : ""}]`,
    );
  if (output) lines.push(output);
  if (view.state === "running") {
    lines.push(
      `\nstatus: running (id ${view.id}). It continues in the background; its end will be reported. Use the process tool (poll, log, write, kill) with sessionId "${view.id}" if you need it sooner.`,
    );
    return { content: lines.join("\n") };
  }
  if (view.state === "lost" || view.state === "unknown") {
    lines.push(
      `\n[the sandbox host restarted while this command ran: it ended unfinished and was NOT run again (id ${view.id}); check its effects before running it again]`,
    );
    return { content: lines.join("\n"), isError: true };
  }
  const how = view.killedByStop
    ? "killed by /stop"
    : view.timedOut
      ? "killed: timed out"
      : view.signal
        ? `killed by ${view.signal}`
        : `exit code ${view.exitCode}`;
  const seconds = view.durationMs !== null ? `, ${(view.durationMs / 1000).toFixed(1)} s` : "";
  lines.push(`${output ? "\n" : ""}[${how}${seconds}]`);
  if (view.written.length) lines.push(`[workspace updated: ${view.written.join(", ")}]`);
  if (view.conflicts.length) lines.push(`[conflicts: ${view.conflicts.join("; ")}]`);
  if (view.skipped.length)
    lines.push(`[not brought back to the workspace: ${view.skipped.join("; ")}]`);
  return {
    content: lines.join("\n"),
    ...(view.exitCode === 0 && !view.signal && !view.timedOut ? {} : { isError: true }),
  };
}
