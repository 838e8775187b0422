import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import { containerDeployments } from "../../functions/channels/companion/container-plan.ts";
import { secretEnvName } from "../../functions/config/secret-ref.ts";
import { sandboxConfigFor } from "../../functions/sandbox/placement.ts";

/** The Durable Object class the `[[containers]]` entry attaches the image to (wrangler.toml binds it). */
export const COMPANION_CONTAINER_CLASS = "CompanionContainerDO";
/** How often the Worker re-arms each deployment's keeper (a lost restart is picked up within this). */
export const COMPANION_KEEPER_CRON = "*/5 * * * *";

export interface CompanionContainerPlan {
  deployments: string[];
  /** A Dockerfile path relative to the project (wrangler builds it: Docker engine needed) or a registry image. */
  image: string;
  imageIsDockerfile: boolean;
  instanceType: string;
  workerUrl: string | undefined;
}

/**
 * Whether this deploy needs the companion container, and how: only while some companion deployment
 * serves an enabled socket account and `companion.container.enabled` is not false (read from the
 * config alone; the account secrets are Worker secrets the deploy never sees).
 */
export function companionContainerPlan(
  config: EdgeclawConfig,
  projectDir: string,
): CompanionContainerPlan | undefined {
  if (!config.companion.container.enabled) return undefined;
  const deployments = containerDeployments(config, {}).map((planned) => planned.deployment);
  if (!deployments.length) return undefined;
  const { image, instanceType, workerUrl } = config.companion.container;
  const imageIsDockerfile = existsSync(resolve(projectDir, image));
  return { deployments, image, imageIsDockerfile, instanceType, workerUrl };
}

/** The class the sandbox `[[containers]]` entry attaches to (wrangler.toml binds it as SANDBOX). */
export const SANDBOX_CONTAINER_CLASS = "SandboxDO";

export interface SandboxContainerPlan {
  /** The agents whose commands run in it ("agents.defaults" when the defaults choose it). */
  agents: string[];
  image: string;
  imageIsDockerfile: boolean;
  instanceType: string;
  maxInstances: number;
}

/**
 * Whether this deploy needs the sandbox container: only while some agent's sandbox backend
 * (agents.defaults.sandbox, or its own agents.list[].sandbox) is "container". Image, instance type
 * and instance cap come from agents.defaults.sandbox: one container class serves every agent.
 */
export function sandboxContainerPlan(
  config: EdgeclawConfig,
  projectDir: string,
): SandboxContainerPlan | undefined {
  const agents = config.agents.list
    .filter((agent) => sandboxConfigFor(config, agent.id).backend === "container")
    .map((agent) => agent.id);
  const defaults = config.agents.defaults.sandbox;
  if (defaults.backend === "container") agents.unshift("agents.defaults");
  if (!agents.length) return undefined;
  const image = defaults.docker.image;
  return {
    agents,
    image,
    imageIsDockerfile: existsSync(resolve(projectDir, image)),
    instanceType: defaults.container.instanceType,
    maxInstances: defaults.container.maxInstances,
  };
}

/**
 * The Worker secrets the container's environment is built from (companion/container-plan.ts): each
 * deployment's signing key, the first outbound key, and every platform secret its accounts name —
 * some of which (a Slack app token) the Worker itself never reads, so no other list names them.
 */
export function companionContainerSecrets(config: EdgeclawConfig): string[] {
  const names = new Set<string>();
  for (const planned of containerDeployments(config, {})) {
    const keySecret = secretEnvName(planned.key.secret);
    if (keySecret) names.add(keySecret);
    for (const account of planned.accounts)
      for (const name of Object.values(account.secretEnv)) names.add(name);
  }
  const outbound = secretEnvName(config.companion.outboundKeys[0]?.secret);
  if (names.size && outbound) names.add(outbound);
  return [...names];
}

/**
 * What `npm run deploy` deploys: wrangler.toml plus the vars that tell the Worker whether the
 * companion container and the sandbox container exist ("1") or not ("0": a companion container a
 * previous deploy started is told to stop at the Worker's first request; the sandbox backend says
 * it was not deployed), and for each container its `[[containers]]` entry on its bound class (plus,
 * for the companion, the cron that re-arms the keepers). TOML tables may follow the array tables,
 * so appending keeps the file valid.
 */
export function deployWranglerToml(
  baseToml: string,
  plan: CompanionContainerPlan | undefined,
  sandbox?: SandboxContainerPlan,
): string {
  if (/^\s*\[vars\]/m.test(baseToml))
    throw new Error(
      "wrangler.toml has a [vars] table; edgeclaw keeps its config in edgeclaw.json5 and adds [vars] itself at deploy",
    );
  if ((plan || sandbox) && /^\s*\[\[containers\]\]/m.test(baseToml))
    throw new Error(
      "wrangler.toml already has [[containers]]; merge the companion and sandbox containers' entries by hand",
    );
  if (plan && /^\s*\[triggers\]/m.test(baseToml)) {
    throw new Error(
      "wrangler.toml already has [triggers]; merge the companion container's cron by hand",
    );
  }
  const lines = [
    baseToml.trimEnd(),
    "",
    "# Added by `npm run deploy` (scripts/lib/deploy-config.ts).",
    "[vars]",
    `EDGECLAW_COMPANION_CONTAINER = "${plan ? "1" : "0"}"`,
    `EDGECLAW_SANDBOX_CONTAINER = "${sandbox ? "1" : "0"}"`,
    "",
  ];
  if (plan)
    lines.push(
      "# Socket accounts are configured: the companion runs as a Cloudflare Container.",
      "[triggers]",
      `crons = ["${COMPANION_KEEPER_CRON}"]`,
      "",
      "[[containers]]",
      `class_name = "${COMPANION_CONTAINER_CLASS}"`,
      `image = ${JSON.stringify(plan.image)}`,
      // The Dockerfile copies functions/ as well as companion/: build from the project root.
      ...(plan.imageIsDockerfile ? ['image_build_context = "."'] : []),
      `max_instances = ${plan.deployments.length}`,
      `instance_type = "${plan.instanceType}"`,
      "",
    );
  if (sandbox)
    lines.push(
      `# An agent's sandbox backend is "container" (${sandbox.agents.join(", ")}): one container per sandbox scope.`,
      "[[containers]]",
      `class_name = "${SANDBOX_CONTAINER_CLASS}"`,
      `image = ${JSON.stringify(sandbox.image)}`,
      // sandbox/Dockerfile bundles companion/src/sandbox with functions/sandbox: the project root.
      ...(sandbox.imageIsDockerfile ? ['image_build_context = "."'] : []),
      `max_instances = ${sandbox.maxInstances}`,
      `instance_type = "${sandbox.instanceType}"`,
      "",
    );
  return lines.join("\n");
}

/** Writes the generated config beside wrangler.toml (relative paths resolve the same); the caller removes it. */
export function writeDeployConfig(
  projectDir: string,
  plan: CompanionContainerPlan | undefined,
  sandbox?: SandboxContainerPlan,
): { path: string; remove: () => void } {
  // One name per process: two deploys (or dry runs in parallel tests) never share or delete each other's file.
  const path = join(projectDir, `wrangler.deploy-${process.pid}.generated.toml`);
  writeFileSync(
    path,
    deployWranglerToml(readFileSync(join(projectDir, "wrangler.toml"), "utf8"), plan, sandbox),
  );
  return { path: relative(projectDir, path) || path, remove: () => rmSync(path, { force: true }) };
}
