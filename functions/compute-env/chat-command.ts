import type { EdgeclawConfig } from "../config/schema.ts";
import type { DbEnv } from "../db/client.ts";
import { computeEnvFor } from "./config.ts";
import { describeEnvs } from "./describe.ts";
import { pendingQuestions } from "./installs.ts";
import { loadManifest, type ManifestEnv } from "./manifest.ts";

/**
 * `/env` in the chat (AcaClaw's `acaclaw-env status | packages [--env] …` where a chat user looks
 * for it, like OpenClaw's plugin commands): the envs with what each is for, one env's packages, and
 * the "create a new env?" questions waiting for an answer. A fast-path command: it reads the
 * manifest as last listed (Postgres) and runs nothing in the sandbox, so it answers at once and
 * changes nothing; installs and new envs go through the model (env_install / env_create), the
 * control page or `npx edgeclaw env`.
 */
export const ENV_USAGE = "/env [status | packages [<env>] | questions]";

/** Packages one reply lists before it points at the CLI for the rest. */
const MAX_PACKAGES = 150;

export async function envCommandReply(
  config: EdgeclawConfig,
  env: DbEnv,
  agentId: string,
  args: string,
): Promise<string> {
  const computeEnv = computeEnvFor(config, agentId);
  if (!computeEnv)
    return "This agent has no computing environment (agents.defaults.computeEnv.enabled, with a sandbox backend).";
  const [sub = "status", ...rest] = args.trim().split(/\s+/).filter(Boolean);
  const envs = await loadManifest(env, agentId);
  switch (sub.toLowerCase()) {
    case "status":
    case "list":
      if (rest.length) return `Usage: ${ENV_USAGE}`;
      return status(envs, (await pendingQuestions(env, agentId)).length, computeEnv.primary);
    case "packages":
    case "pkgs": {
      if (rest.length > 1) return `Usage: ${ENV_USAGE}`;
      return packages(envs, rest[0] ?? computeEnv.primary, agentId);
    }
    case "questions":
    case "pending": {
      if (rest.length) return `Usage: ${ENV_USAGE}`;
      return questions(await pendingQuestions(env, agentId));
    }
    default:
      return `Usage: ${ENV_USAGE}`;
  }
}

function status(envs: readonly ManifestEnv[], open: number, primaryName: string): string {
  if (!envs.length)
    return "No conda env is registered yet: the first command in the sandbox finds them (or `npx edgeclaw env status`).";
  const primary = envs.find((e) => e.type === "primary");
  const r = primary?.rVersion
    ? `R ${primary.rVersion} is in ${primary.name}.`
    : `R is not in ${primary?.name ?? primaryName}: ask me to install r-base r-irkernel r-essentials, or \`npx edgeclaw env install r-base r-irkernel r-essentials\`.`;
  return [
    "Computing environments (as last listed):",
    describeEnvs(envs, false),
    r,
    open
      ? `${open} question${open === 1 ? "" : "s"} about a new env wait${open === 1 ? "s" : ""} for an answer: /env questions`
      : "No question waits for an answer.",
  ].join("\n");
}

function packages(envs: readonly ManifestEnv[], name: string, agentId: string): string {
  const found = envs.find((e) => e.name === name);
  if (!found)
    return envs.length
      ? `No registered env "${name}": ${envs.map((e) => e.name).join(", ")}.`
      : "No conda env is registered yet.";
  const names = Object.keys(found.packages).sort();
  const shown = names.slice(0, MAX_PACKAGES).map((n) => `${n} ${found.packages[n]}`);
  const more =
    names.length > MAX_PACKAGES
      ? ` … and ${names.length - MAX_PACKAGES} more (\`npx edgeclaw env packages --env ${found.name} --agent ${agentId}\`)`
      : "";
  return `${found.name} (${found.type}, ${names.length} packages): ${shown.join(", ")}${more}`;
}

function questions(open: Awaited<ReturnType<typeof pendingQuestions>>): string {
  if (!open.length) return "No question waits for an answer.";
  return [
    `Waiting for an answer (${open.length}):`,
    ...open.map((q) => {
      const p = q.proposal;
      return `• ${q.packages.join(" ")} conflicts with every env${p ? ` — create ${p.name} for it?` : "."} (question ${q.id}) Say yes here to have me create it, or decide on the control page (Environments).`;
    }),
  ].join("\n");
}
