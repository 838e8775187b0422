import type { EdgeclawConfig } from "../config/schema.ts";
import type { DbEnv } from "../db/client.ts";
import { loadStartupNotes, renderStartupContext } from "./memory/startup-context.ts";
import { renderSystemPrompt } from "./prompt.ts";
import type { PromptRuntime, SystemPrompt } from "./prompt-input.ts";
import { BOOTSTRAP_FILES } from "./prompt-project-context.ts";
import { readFiles } from "./workspace.ts";
import { ensureAgentWorkspace } from "./workspace-seeding.ts";
import { computeEnvFor } from "../compute-env/config.ts";
import { loadManifest } from "../compute-env/manifest.ts";
import { computingEnvironmentsSection } from "../compute-env/prompt-section.ts";
import { exclusionReason, loadSkills } from "./skills/catalog.ts";
import { skillsPromptSection } from "./skills/prompt-section.ts";

/** What the prompt needs from the workspace store: bootstrap files and, after a reset, daily notes. */

/** Reads the bootstrap files of `agentId` (seeding a new workspace first) as a path → content map. */
export async function loadBootstrapFiles(
  env: DbEnv,
  config: EdgeclawConfig,
  agentId: string,
): Promise<Map<string, string>> {
  await ensureAgentWorkspace(env, config, agentId);
  const found = await readFiles(
    env,
    agentId,
    BOOTSTRAP_FILES.map((file) => file.path),
  );
  return new Map([...found].map(([path, file]) => [path, file.content]));
}

/**
 * The loader the agent loop calls: seeds if needed, reads the files, renders the prompt. With
 * `startupContext` (the first run after /new or /reset) today's and yesterday's daily notes are
 * added — only in the owner's main private session, since memory/ is private memory.
 */
export async function loadSystemPrompt(
  env: DbEnv,
  config: EdgeclawConfig,
  agent: { id: string; name?: string },
  runtime: PromptRuntime,
  options: { startupContext?: boolean } = {},
): Promise<SystemPrompt> {
  const files = await loadBootstrapFiles(env, config, agent.id);
  const startup =
    options.startupContext && runtime.mainPrivateSession === true
      ? renderStartupContext(await loadStartupNotes(env, config, agent.id, runtime.now), config)
      : undefined;
  // AcaClaw's before_prompt_build: the envs the commands run in, when the run may run commands.
  const computeEnv = computeEnvFor(config, agent.id);
  const computing =
    computeEnv && runtime.tools.some((tool) => tool.name === "exec")
      ? computingEnvironmentsSection(await loadManifest(env, agent.id), computeEnv)
      : undefined;
  const skills = await skillsSection(env, config, agent.id, runtime);
  return renderSystemPrompt({
    config,
    agent,
    files,
    runtime: {
      ...runtime,
      ...(startup ? { startupContext: startup } : {}),
      ...(computing ? { computingEnvironments: computing } : {}),
      ...(skills ? { skills } : {}),
    },
  });
}

/** The eligible skills as the prompt's catalog; none without the read tool (the model could not open them). */
async function skillsSection(
  env: DbEnv,
  config: EdgeclawConfig,
  agentId: string,
  runtime: PromptRuntime,
): Promise<string | undefined> {
  const toolNames = runtime.tools.map((tool) => tool.name);
  if (!toolNames.includes("read")) return undefined;
  const context = { config, agentId, env: env as Record<string, unknown>, toolNames };
  const eligible = (await loadSkills(env, agentId)).filter(
    (skill) => skill.modelInvocable && exclusionReason(skill, context) === undefined,
  );
  const limit =
    config.agents.list.find((entry) => entry.id === agentId)?.skillsLimits?.maxSkillsPromptChars ??
    config.skills.limits.maxSkillsPromptChars;
  return skillsPromptSection(eligible, limit);
}
