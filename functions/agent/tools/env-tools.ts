import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { DbEnv } from "../../db/client.ts";
import { computeEnvFor } from "../../compute-env/config.ts";
import { ensureManifest, installPackages, type CascadeDeps } from "../../compute-env/cascade.ts";
import { createEnv } from "../../compute-env/create-env.ts";
import { describeEnvs, describeInstall } from "../../compute-env/describe.ts";
import { sandboxRunner } from "../../compute-env/runner.ts";
import type { AgentTool, ToolContext } from "../types.ts";
import { ToolInputError, parseToolArgs } from "./common.ts";

/**
 * The computing environment's tools (AcaClaw's on-demand installs): env_install runs the cascade,
 * env_create makes the new env the user agreed to, env_status lists envs and packages. Owner-only
 * as exec is. Each call's record is keyed by its tool-call id, so a resumed run reads the first
 * attempt's record and its sandbox commands' results instead of installing again.
 */
function deps(ctx: ToolContext, tool: string): CascadeDeps {
  const config = computeEnvFor(ctx.config, ctx.agentId);
  if (!config)
    throw new ToolInputError(
      `${tool}: this agent has no computing environment (agents.defaults.computeEnv.enabled)`,
    );
  return {
    db: ctx.env as DbEnv,
    runner: sandboxRunner(ctx.config, ctx.env, ctx.agentId, ctx.sessionKey, config),
    config,
    agentId: ctx.agentId,
  };
}

function recordId(ctx: ToolContext): string {
  return `${ctx.agentId}:${ctx.toolCallId ?? crypto.randomUUID()}`;
}

const installArgs = z.object({
  packages: z.array(z.string().min(1)).min(1),
  env: z.string().optional(),
});
const createArgs = z.object({
  name: z.string().min(1),
  packages: z.array(z.string().min(1)).min(1),
  description: z.string().min(1),
  reason: z.string().min(1),
  questionId: z.string().optional(),
});
const statusArgs = z.object({ env: z.string().optional() });

export function createEnvTools(config: EdgeclawConfig, agentId: string): AgentTool[] {
  const computeEnv = computeEnvFor(config, agentId);
  if (!computeEnv) return [];
  const ownerOnly = !config.tools.exec.allowNonOwners;
  return [
    {
      name: "env_install",
      ownerOnly,
      description: `Install conda packages only when the user asks for them. Tries the primary env (${computeEnv.primary}) with a dry-run, then each auxiliary env; if all conflict it changes nothing and returns a question for the user (create a new env?). Never breaks a working env.`,
      parameters: {
        type: "object",
        properties: {
          packages: {
            type: "array",
            items: { type: "string" },
            description: "conda package specs (seaborn, pytorch-cuda=12.4)",
          },
          env: { type: "string", description: "Only this registered env (no cascade)" },
        },
        required: ["packages"],
        additionalProperties: false,
      },
      async execute(raw, ctx) {
        const args = parseToolArgs("env_install", installArgs, raw);
        const row = await installPackages(deps(ctx, "env_install"), {
          id: recordId(ctx),
          packages: args.packages,
          ...(args.env ? { envName: args.env } : {}),
          requestedBy: ctx.senderIsOwner ? "owner" : "sender",
          sessionKey: ctx.sessionKey,
        });
        return {
          content: describeInstall(row),
          ...(["refused", "failed", "rolled-back"].includes(row.status) ? { isError: true } : {}),
        };
      },
    },
    {
      name: "env_create",
      ownerOnly,
      description:
        "Create a new auxiliary conda env, only after the user agreed (env_install's question). Registers it with its description and reason; later commands that need its packages run there.",
      parameters: {
        type: "object",
        properties: {
          name: { type: "string", description: `New env name, e.g. ${computeEnv.primary}-gpu` },
          packages: { type: "array", items: { type: "string" } },
          description: {
            type: "string",
            description: "What the env is for (shown to you in every prompt)",
          },
          reason: { type: "string", description: "Why it was needed (the conflict)" },
          questionId: { type: "string", description: "The env_install question it answers" },
        },
        required: ["name", "packages", "description", "reason"],
        additionalProperties: false,
      },
      async execute(raw, ctx) {
        const args = parseToolArgs("env_create", createArgs, raw);
        const row = await createEnv(deps(ctx, "env_create"), {
          id: recordId(ctx),
          ...args,
          requestedBy: ctx.senderIsOwner ? "owner" : "sender",
          sessionKey: ctx.sessionKey,
        });
        return {
          content: describeInstall(row),
          ...(row.status === "created" ? {} : { isError: true }),
        };
      },
    },
    {
      name: "env_status",
      ownerOnly,
      description:
        "List the conda envs (primary and auxiliary), what each is for and its packages.",
      parameters: {
        type: "object",
        properties: { env: { type: "string" } },
        additionalProperties: false,
      },
      async execute(raw, ctx) {
        const args = parseToolArgs("env_status", statusArgs, raw);
        const d = deps(ctx, "env_status");
        const envs = await ensureManifest(d, `${recordId(ctx)}.detect`);
        const shown = args.env ? envs.filter((e) => e.name === args.env) : envs;
        return { content: describeEnvs(shown, true) };
      },
    },
  ];
}
