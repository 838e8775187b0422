import * as z from "zod";
import type { ComputeEnvConfig } from "../config/compute-env-schema.ts";
import { parseEnvList, parseList } from "./conda-cli.ts";
import type { ManifestEnv } from "./manifest.ts";
import type { CondaRunner } from "./runner.ts";
import { shellQuote } from "./wrap.ts";

/**
 * Finding the envs that exist, in AcaClaw's order: its own Miniforge
 * (~/.acaclaw/miniforge3/bin/conda, then condabin/conda), then the configured conda prefix, then
 * conda / mamba / micromamba on PATH; that conda's `env list --json` and each env's `list --json`;
 * and R — conda R in the primary env, else system R ("Using system R"), else "R not installed".
 * One command in the sandbox, its sections marked so one answer carries them all.
 */
export interface DetectedEnv {
  name: string;
  prefix: string;
  packages: Record<string, string>;
}

export interface Detection {
  condaExe: string | null;
  /** Where it was found, in the seed's order. */
  source: "acaclaw-miniforge" | "conda-prefix" | "path" | null;
  envs: DetectedEnv[];
  systemR: { path: string; version: string | null } | null;
  /** The image's own manifest (<conda root>/edgeclaw/env-manifest.json, sandbox/env/build-env.sh). */
  seed: ImageManifest | null;
}

const imageManifestSchema = z.object({
  environments: z.record(
    z.string(),
    z
      .object({
        type: z.string().optional(),
        description: z.string().max(500).optional(),
        disciplines: z.array(z.string()).optional(),
      })
      .loose(),
  ),
  defaultEnv: z.string().optional(),
});
export type ImageManifest = z.infer<typeof imageManifestSchema>;

export type RStatus =
  | { kind: "conda"; env: string; version: string }
  | { kind: "system"; path: string; version: string | null; banner: "Using system R" }
  | { kind: "none"; banner: "R not installed"; install: string };

export function detectScript(config: ComputeEnvConfig): string {
  const candidates = [
    '"$HOME/.acaclaw/miniforge3/bin/conda"',
    '"$HOME/.acaclaw/miniforge3/condabin/conda"',
    shellQuote(`${config.condaPrefix}/bin/${config.condaExe}`),
  ].join(" ");
  return [
    "exe=''; src=''",
    `for c in ${candidates}; do if [ -z "$exe" ] && [ -x "$c" ]; then exe="$c"; case "$c" in *'.acaclaw/miniforge3'*) src=acaclaw-miniforge;; *) src=conda-prefix;; esac; fi; done`,
    `if [ -z "$exe" ]; then for n in ${shellQuote(config.condaExe)} conda mamba micromamba; do p=$(command -v "$n" 2>/dev/null) && { exe="$p"; src=path; break; }; done; fi`,
    'echo "@@exe $src $exe"',
    // The image's record of what it built, beside conda (<root>/bin/conda → <root>/edgeclaw/).
    'if [ -n "$exe" ]; then m="$(dirname "$(dirname "$exe")")/edgeclaw/env-manifest.json"; if [ -f "$m" ]; then echo "@@seed"; head -c 65536 "$m"; echo; fi; fi',
    'if [ -n "$exe" ]; then echo "@@envs"; "$exe" env list --json; fi',
    'r=$(command -v R 2>/dev/null) && { echo "@@R $r"; R --version 2>/dev/null | head -n 1; }',
    "true",
  ].join("\n");
}

export function parseDetection(output: string): Detection {
  const sections = output.split(/^@@/m).slice(1);
  const result: Detection = {
    condaExe: null,
    source: null,
    envs: [],
    systemR: null,
    seed: null,
  };
  let prefixes: string[] = [];
  for (const section of sections) {
    const newline = section.indexOf("\n");
    const head = (newline < 0 ? section : section.slice(0, newline)).trim();
    const body = newline < 0 ? "" : section.slice(newline + 1);
    if (head.startsWith("exe")) {
      const [, source, ...exe] = head.split(" ");
      if (exe.join(" ")) {
        result.condaExe = exe.join(" ");
        result.source = (source as Detection["source"]) || null;
      }
    } else if (head === "seed")
      result.seed = safe(() => imageManifestSchema.parse(JSON.parse(body)), null);
    else if (head === "envs") prefixes = safe(() => parseEnvList(body), []);
    else if (head.startsWith("list ")) {
      const prefix = head.slice(5);
      const records = safe(() => parseList(body), []);
      result.envs.push({
        name: /\/envs\/([^/]+)$/.exec(prefix)?.[1] ?? "base",
        prefix,
        packages: Object.fromEntries(records.map((r) => [r.name, r.version])),
      });
    } else if (head.startsWith("R ")) {
      result.systemR = {
        path: head.slice(2),
        version: /R version (\S+)/.exec(body)?.[1] ?? null,
      };
    }
  }
  for (const prefix of prefixes)
    if (!result.envs.some((e) => e.prefix === prefix))
      result.envs.push({
        name: /\/envs\/([^/]+)$/.exec(prefix)?.[1] ?? "base",
        prefix,
        packages: {},
      });
  return result;
}

function safe<T>(work: () => T, fallback: T): T {
  try {
    return work();
  } catch {
    return fallback;
  }
}

/** The packages of each env found: one more command, `<conda> list -p <prefix> --json` per env. */
export function listScript(exe: string, prefixes: readonly string[]): string {
  return prefixes
    .map(
      (p) =>
        `echo ${shellQuote(`@@list ${p}`)}; ${shellQuote(exe)} list -p ${shellQuote(p)} --json`,
    )
    .join("\n");
}

export async function detect(
  runner: CondaRunner,
  config: ComputeEnvConfig,
  stepId: string,
): Promise<Detection> {
  const first = parseDetection(
    (await runner.run(`${stepId}.find`, detectScript(config), { timeoutSeconds: 120 })).output,
  );
  if (!first.condaExe || !first.envs.length) return first;
  const listed = parseDetection(
    (
      await runner.run(
        `${stepId}.list`,
        listScript(
          first.condaExe,
          first.envs.map((e) => e.prefix),
        ),
        { timeoutSeconds: 300 },
      )
    ).output,
  );
  return {
    ...first,
    envs: first.envs.map((e) => listed.envs.find((l) => l.prefix === e.prefix) ?? e),
  };
}

/** AcaClaw's R order: conda R in the primary env, else system R, else not installed (with the fix). */
export function rStatus(primary: ManifestEnv | undefined, systemR: Detection["systemR"]): RStatus {
  const condaR = primary?.packages["r-base"];
  if (primary && condaR) return { kind: "conda", env: primary.name, version: condaR };
  if (systemR)
    return {
      kind: "system",
      path: systemR.path,
      version: systemR.version,
      banner: "Using system R",
    };
  return {
    kind: "none",
    banner: "R not installed",
    install: "npx edgeclaw env install r-base r-irkernel r-essentials",
  };
}
