import type { ComputeEnvConfig } from "../config/compute-env-schema.ts";
import { CORE_STACK, DISCIPLINES, disciplineById } from "./disciplines.ts";
import type { ManifestEnv } from "./manifest.ts";
import { specName } from "./conda-cli.ts";

/**
 * The `## Computing Environments` section of the system prompt (AcaClaw's before_prompt_build
 * hook), built from the manifest: which envs exist and what each is for, which packages are already
 * there, and that installing is the user's call and goes through env_install.
 */

/** Names shown per env before "and N more": enough for the model to know, bounded for the prompt. */
const SHOWN_PER_ENV = 40;

const NOTABLE = new Set([
  ...CORE_STACK.map(specName),
  ...DISCIPLINES.flatMap((d) => [...d.packages, ...d.rPackages]),
  "r-base",
  "pytorch",
  "pytorch-cuda",
  "torchvision",
  "jax",
  "jaxlib",
  "tensorflow",
  "seaborn",
]);

/** Low-level packages the model never needs to be told about. */
const PLUMBING =
  /^(_|lib|ca-certificates|openssl|tzdata|ncurses|readline|bzip2|xz|zlib|tk|ld_impl|pip$|setuptools$|wheel$)/;

function majorMinor(version: string | null): string | undefined {
  return version ? version.split(".").slice(0, 2).join(".") : undefined;
}

function summary(env: ManifestEnv): string {
  const parts: string[] = [];
  const py = majorMinor(env.pythonVersion);
  if (py) parts.push(`Python ${py}`);
  const r = majorMinor(env.rVersion);
  if (r) parts.push(`R ${r}`);
  if (env.disciplines.length)
    parts.push(
      `${env.disciplines.map((id) => disciplineById(id)?.label ?? id).join(" + ")} packages`,
    );
  if (env.type === "auxiliary" && env.description) parts.push(env.description);
  return parts.join(", ");
}

function packageLine(env: ManifestEnv): string {
  const names = Object.keys(env.packages).filter(
    (name) => name !== "python" && !PLUMBING.test(name),
  );
  if (!names.length) return "  packages: (not listed yet)";
  names.sort((a, b) => Number(NOTABLE.has(b)) - Number(NOTABLE.has(a)) || a.localeCompare(b));
  const shown = names.slice(0, SHOWN_PER_ENV).map((name) => `${name} ${env.packages[name]}`);
  const more = names.length - shown.length;
  return `  packages: ${shown.join(", ")}${more > 0 ? ` … and ${more} more (env_status lists them)` : ""}`;
}

export function computingEnvironmentsSection(
  envs: readonly ManifestEnv[],
  config: ComputeEnvConfig,
): string {
  const lines = ["## Computing Environments", ""];
  const primary = envs.find((e) => e.type === "primary");
  const auxiliaries = envs.filter((e) => e.type === "auxiliary");
  if (!primary) {
    lines.push(
      `Primary: \`${config.primary}\` (not inspected yet: its packages are listed after the first command or env_status)`,
    );
  } else {
    lines.push(`Primary: \`${primary.name}\` (${summary(primary)})`, packageLine(primary));
  }
  for (const aux of auxiliaries) {
    lines.push(`Auxiliary: \`${aux.name}\` (${summary(aux)})`);
    if (aux.createdReason) lines.push(`  created because: ${aux.createdReason}`);
    lines.push(packageLine(aux));
  }
  const primaryName = primary?.name ?? config.primary;
  lines.push(
    "",
    `Use the primary env for general tasks.${auxiliaries.map((aux) => ` Switch to ${aux.name} for ${aux.description || "what it was created for"}.`).join("")}`,
    `Every exec command already runs as \`${config.condaExe} run -n ${primaryName} …\`: do not activate envs yourself. A command that needs a package only an auxiliary env has is routed there; to choose yourself, start the command with \`${config.condaExe} run -n <env>\`.`,
    "The packages above are already installed. Do not run pip install, conda install or install.packages() unless the user asks; when a package is missing, tell the user and, if they want it, install it with env_install (it tries the primary env, then the auxiliary envs, and asks before creating a new env; it never breaks a working env).",
  );
  return lines.join("\n");
}
