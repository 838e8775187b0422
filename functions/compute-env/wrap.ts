import type { ComputeEnvConfig } from "../config/compute-env-schema.ts";
import { runIn } from "./conda-cli.ts";
import type { ManifestEnv } from "./manifest.ts";

/**
 * AcaClaw's before_tool_call hook: every exec command runs in a conda env, as
 * `conda run --no-capture-output -n <env> …`. The primary env by default; an auxiliary env when the command
 * needs a package only that env has (from its imports, the Python script it runs, or the program it
 * calls); left alone when it already names an env or is itself a conda command.
 */
export interface WrappedCommand {
  command: string;
  /** The env it runs in; undefined when left alone. */
  env: string | undefined;
  /** Why this env (routing) or why it was left alone. */
  reason: string;
}

/** Import names whose conda package is named otherwise. */
const IMPORT_PACKAGES: Record<string, string> = {
  torch: "pytorch",
  sklearn: "scikit-learn",
  skbio: "scikit-bio",
  Bio: "biopython",
  cv2: "opencv",
  PIL: "pillow",
  yaml: "pyyaml",
  umap: "umap-learn",
  mpl_toolkits: "matplotlib",
  dicom: "pydicom",
};

/** Programs whose conda package is named otherwise. */
const PROGRAM_PACKAGES: Record<string, string> = {
  R: "r-base",
  Rscript: "r-base",
  "jupyter-lab": "jupyterlab",
  obabel: "openbabel",
};

/** A segment that is a conda command (`conda run -n x …`, `mamba list`) or activates an env. */
const NAMES_ENV = /(^|[;&|(]\s*)((conda|mamba|micromamba)\s|(source\s+|\.\s+)?activate\b)/;
const SHELL_SYNTAX = /[|&;<>()$`\\"'*?[\]{}~#\n]/;

/** Python modules a script or a command line imports (`import a.b`, `from c import d`, `-m e`). */
export function pythonImports(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(
    /(?:^|[\s;"'(])import\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)/g,
  ))
    for (const name of m[1]!.split(",")) found.add(name.trim().split(".")[0]!);
  for (const m of text.matchAll(/(?:^|[\s;"'(])from\s+([A-Za-z_][\w]*)[\w.]*\s+import\b/g))
    found.add(m[1]!);
  for (const m of text.matchAll(/\bpython3?\s+-m\s+([A-Za-z_]\w*)/g)) found.add(m[1]!);
  return [...found];
}

/** R packages a script or a command line loads (`library(x)`, `require(x)`). */
function rLibraries(text: string): string[] {
  return [...text.matchAll(/\b(?:library|require)\(\s*['"]?([A-Za-z][\w.]*)/g)].map(
    (m) => `r-${m[1]!.toLowerCase()}`,
  );
}

/** The Python / R scripts a command runs (`python train.py`, `Rscript fit.R`): read for their imports. */
export function scriptsRun(command: string): string[] {
  return [
    ...command.matchAll(/\b(?:python3?|Rscript)\s+(?:-[A-Za-z]+\s+)*([\w./-]+\.(?:py|R|r))\b/g),
  ].map((m) => m[1]!.replace(/^\.\//, "").replace(/^\/workspace\//, ""));
}

/** The conda packages a command needs, as far as its text and its scripts say. */
export function neededPackages(command: string, scripts: readonly string[]): string[] {
  const names = new Set<string>();
  for (const text of [command, ...scripts]) {
    for (const module of pythonImports(text))
      names.add(IMPORT_PACKAGES[module] ?? module.toLowerCase().replace(/_/g, "-"));
    for (const pkg of rLibraries(text)) names.add(pkg);
  }
  for (const segment of command.split(/[|;&\n]+/)) {
    const program = segment.trim().split(/\s+/)[0];
    if (program) names.add(PROGRAM_PACKAGES[program] ?? program.toLowerCase());
  }
  return [...names];
}

export function wrapCommand(
  command: string,
  envs: readonly ManifestEnv[],
  config: ComputeEnvConfig,
  scripts: readonly string[] = [],
): WrappedCommand {
  if (NAMES_ENV.test(command))
    return { command, env: undefined, reason: "the command names its conda env itself" };
  const primary = envs.find((e) => e.type === "primary")?.name ?? config.primary;
  let target = primary;
  let reason = "the primary env";
  if (config.autoRoute) {
    const primaryPackages = envs.find((e) => e.name === primary)?.packages ?? {};
    // Only names some env has count: stdlib modules and shell builtins are no signal.
    const known = neededPackages(command, scripts).filter((name) =>
      envs.some((e) => name in e.packages),
    );
    const missing = known.filter((name) => !(name in primaryPackages));
    if (missing.length) {
      const aux = envs.find(
        (e) => e.type === "auxiliary" && known.every((name) => name in e.packages),
      );
      if (aux) {
        target = aux.name;
        reason = `it needs ${missing.join(", ")}, which only ${aux.name} has`;
      }
    }
  }
  const argv = SHELL_SYNTAX.test(command) ? `sh -c ${shellQuote(command)}` : command.trim();
  return {
    command: runIn({ exe: config.condaExe, channels: [] }, target, argv),
    env: target,
    reason,
  };
}

export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
