import * as z from "zod";

/**
 * The conda command lines the computing environment runs in the sandbox, and what it reads of
 * their `--json` answers (conda's documented CLI; mamba takes the same flags). Every package spec
 * and env name is checked before it reaches a shell: no quoting games, nothing but a conda
 * MatchSpec. Every install and create names its channels with `--override-channels`, so nothing
 * comes from a channel the operator did not configure (a user's .condarc included).
 */

const ENV_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** name, then an optional version / build constraint: `numpy`, `numpy=1.26`, `pytorch-cuda=12.4`, `scipy>=1.11,<2`. */
const PACKAGE_SPEC = /^[A-Za-z0-9][A-Za-z0-9._-]*(?:[=<>!~][A-Za-z0-9.*=<>!~,_+-]*)?$/;

export class CondaInputError extends Error {}

export function checkEnvName(name: string): string {
  if (!ENV_NAME.test(name))
    throw new CondaInputError(
      `"${name}" is not a conda env name (letters, digits, . _ -; at most 64)`,
    );
  return name;
}

export function checkPackages(packages: readonly string[]): string[] {
  if (!packages.length) throw new CondaInputError("no package named");
  if (packages.length > 50) throw new CondaInputError("at most 50 packages at once");
  for (const spec of packages)
    if (!PACKAGE_SPEC.test(spec))
      throw new CondaInputError(
        `"${spec}" is not a conda package spec (name, optionally =version or a constraint like >=1.2); pip extras such as jax[cuda] are not conda specs`,
      );
  return [...packages];
}

/** The package name of a spec (`numpy>=1.2` → numpy). */
export function specName(spec: string): string {
  return spec.split(/[=<>!~ ]/)[0]!.toLowerCase();
}

export interface CondaCommands {
  exe: string;
  channels: readonly string[];
}

function channelArgs(c: CondaCommands): string {
  return ["--override-channels", ...c.channels.flatMap((ch) => ["-c", ch])].join(" ");
}

/** The seed's dry-run (`conda install --dry-run -n <env> <pkg>`), then --json and the channels. */
export function dryRunInstall(c: CondaCommands, env: string, packages: readonly string[]): string {
  return `${c.exe} install --dry-run -n ${env} ${packages.join(" ")} --json ${channelArgs(c)}`;
}

export function install(c: CondaCommands, env: string, packages: readonly string[]): string {
  return `${c.exe} install -n ${env} ${packages.join(" ")} -y --json ${channelArgs(c)}`;
}

export function dryRunCreate(c: CondaCommands, env: string, packages: readonly string[]): string {
  return `${c.exe} create --dry-run -n ${env} ${packages.join(" ")} --json ${channelArgs(c)}`;
}

export function create(c: CondaCommands, env: string, packages: readonly string[]): string {
  return `${c.exe} create -n ${env} ${packages.join(" ")} -y --json ${channelArgs(c)}`;
}

export function listPackages(c: CondaCommands, env: string): string {
  return `${c.exe} list -n ${env} --json`;
}

/**
 * What an env holds, in one command: `conda list --json` (names and versions, for the manifest and
 * the prompt) and `conda list --explicit --md5` (its explicit lock: every package's URL and md5,
 * what `conda create --file` rebuilds it from). Each answer follows a marker line.
 */
export function snapshot(c: CondaCommands, env: string): string {
  // micromamba writes the explicit form with `env export --explicit`; a conda without it still
  // gives the package list (the lock is then null, and nothing is rebuilt from it).
  const explicit = /(^|\/)micromamba$/.test(c.exe)
    ? `${c.exe} env export -n ${env} --explicit`
    : `${c.exe} list -n ${env} --explicit --md5`;
  return `echo @@json; ${c.exe} list -n ${env} --json || exit 1; echo @@explicit; ${explicit} || true`;
}

export function parseSnapshot(
  output: string,
): { packages: Record<string, string>; lock: string | null } | undefined {
  const json = output.indexOf("@@json\n");
  const explicit = output.indexOf("@@explicit\n");
  if (json < 0 || explicit < json) return undefined;
  let packages: Record<string, string>;
  try {
    packages = Object.fromEntries(
      parseList(output.slice(json + 7, explicit)).map((r) => [r.name, r.version]),
    );
  } catch {
    return undefined;
  }
  const lock = output.slice(explicit + 11).trim();
  return { packages, lock: /^@EXPLICIT$/m.test(lock) ? `${lock}\n` : null };
}

/** An explicit lock's lines are comments, `@EXPLICIT` and package URLs (with `#md5`): nothing else. */
const LOCK_LINE =
  /^(#.*|@EXPLICIT|[A-Za-z][A-Za-z0-9+.-]*:\/\/[A-Za-z0-9._~%!$&'()*+,;=:@/-]+(#[0-9a-fA-F]{32,64})?)$/;

export function checkLock(lock: string): string {
  const lines = lock.trim().split("\n");
  if (!lines.includes("@EXPLICIT")) throw new CondaInputError("not an explicit lock (@EXPLICIT)");
  for (const line of lines)
    if (!LOCK_LINE.test(line.trim()))
      throw new CondaInputError(`not a line of an explicit lock: ${line.slice(0, 120)}`);
  return `${lines.map((l) => l.trim()).join("\n")}\n`;
}

/** The package URLs of an explicit lock (md5 dropped). */
export function lockUrls(lock: string): string[] {
  const lines = lock.split("\n").map((l) => l.trim());
  return lines
    .slice(lines.indexOf("@EXPLICIT") + 1)
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => l.split("#")[0]!);
}

/** The channel of a lock's URL (`…/conda-forge/linux-64/x.conda` → `…/conda-forge`). */
export function urlChannel(url: string): string {
  return url.split("/").slice(0, -2).join("/");
}

/** The dists an explicit lock lists (`numpy-1.26.4-py312h…`): the URL's file name without its extension. */
export function lockDists(lock: string): string[] {
  return lockUrls(lock).map((u) =>
    u
      .split("/")
      .at(-1)!
      .replace(/\.(conda|tar\.bz2)$/, ""),
  );
}

/**
 * Rebuilds an env from its lock (`conda create|install -n <env> --file <lock> -y`): the lock is
 * written to a file first (a quoted here-document: nothing in it is expanded), removed after.
 * An explicit file is linked as listed, with no solve and no channel but its URLs'.
 */
export function fromLock(
  c: CondaCommands,
  verb: "create" | "install",
  env: string,
  lock: string,
): string {
  const file = `/tmp/edgeclaw-${env}.explicit.txt`;
  return [
    `cat > ${file} <<'EDGECLAW_LOCK_END'`,
    checkLock(lock).trimEnd(),
    "EDGECLAW_LOCK_END",
    `${c.exe} ${verb} -n ${env} --file ${file} -y --json; rc=$?; rm -f ${file}; exit $rc`,
  ].join("\n");
}

export function envList(c: CondaCommands): string {
  return `${c.exe} env list --json`;
}

export function revisions(c: CondaCommands, env: string): string {
  return `${c.exe} list -n ${env} --revisions`;
}

/** Back to a revision `conda list --revisions` named: what undoes a failed or interrupted install. */
export function rollback(c: CondaCommands, env: string, revision: number): string {
  return `${c.exe} install -n ${env} --revision ${revision} -y --json`;
}

export function removeEnv(c: CondaCommands, env: string): string {
  return `${c.exe} env remove -n ${env} -y --json`;
}

/**
 * The seed's wrapping, `conda run -n <env> …`. The seed writes `--no-banner`, which conda's `run`
 * does not accept (its options: -n/-p, --cwd, -v, --no-capture-output/--live-stream/-s, --dev,
 * --debug-wrapper-scripts) and would refuse the command for. `--no-capture-output` is added
 * instead: without it conda holds the command's output until it exits, so a background command's
 * log and `process poll` would stay empty. micromamba's `run` streams already and takes no such flag.
 */
export function runIn(c: CondaCommands, env: string, argv: string): string {
  const streams = /(^|\/)micromamba$/.test(c.exe) ? "" : " --no-capture-output";
  return `${c.exe} run${streams} -n ${env} ${argv}`;
}

const packageRecord = z
  .object({
    name: z.string(),
    version: z.string(),
    size: z.number().optional(),
    channel: z.string().optional(),
  })
  .loose();
export type PackageRecord = z.infer<typeof packageRecord>;

/** `conda list -n <env> --json`: one record per installed package. */
export function parseList(output: string): PackageRecord[] {
  return z.array(packageRecord).parse(parseJson(output));
}

/** `conda env list --json`: the prefixes of every env. */
export function parseEnvList(output: string): string[] {
  return z.object({ envs: z.array(z.string()) }).parse(parseJson(output)).envs;
}

/** The highest `(rev N)` of `conda list --revisions`. */
export function parseLastRevision(output: string): number | undefined {
  const revs = [...output.matchAll(/\(rev (\d+)\)/g)].map((m) => Number(m[1]));
  return revs.length ? Math.max(...revs) : undefined;
}

export type SolveOutcome =
  | {
      kind: "ok";
      link: PackageRecord[];
      unlink: PackageRecord[];
      downloadBytes: number;
      alreadyInstalled: boolean;
    }
  /** The solver found no way to add the specs to this env (UnsatisfiableError and kin). */
  | { kind: "conflict"; message: string }
  /** A spec names nothing the channels have: no env would take it. */
  | { kind: "not-found"; message: string }
  | { kind: "error"; message: string };

const solveAnswer = z
  .object({
    success: z.boolean().optional(),
    message: z.string().optional(),
    actions: z
      .object({
        FETCH: z.array(packageRecord).optional(),
        LINK: z.array(packageRecord).optional(),
        UNLINK: z.array(packageRecord).optional(),
      })
      .loose()
      .optional(),
    exception_name: z.string().optional(),
    error: z.string().optional(),
  })
  .loose();

/** What an install / create answered with --json (dry-run or not), with its exit code. */
export function parseSolve(output: string, exitCode: number | null): SolveOutcome {
  let answer: z.infer<typeof solveAnswer>;
  try {
    answer = solveAnswer.parse(parseJson(output));
  } catch {
    return { kind: "error", message: firstLines(output) || `exit code ${exitCode}` };
  }
  const exception = answer.exception_name ?? "";
  const message = (answer.message ?? answer.error ?? "").trim();
  if (/Unsatisfiable|ResolvePackageNotFound|SpecsConfigurationConflict/.test(exception))
    return { kind: "conflict", message: firstLines(message) };
  if (/PackagesNotFound|PackageNotFound/.test(exception))
    return { kind: "not-found", message: firstLines(message) };
  if (exitCode !== 0 || answer.success === false || exception)
    return { kind: "error", message: firstLines(message) || `exit code ${exitCode}` };
  const fetch = answer.actions?.FETCH ?? [];
  return {
    kind: "ok",
    link: answer.actions?.LINK ?? [],
    unlink: answer.actions?.UNLINK ?? [],
    downloadBytes: fetch.reduce((sum, record) => sum + (record.size ?? 0), 0),
    alreadyInstalled: !answer.actions,
  };
}

/** conda prints its JSON on stdout; anything before the first brace (a warning) is skipped. */
function parseJson(output: string): unknown {
  const start = output.search(/[[{]/);
  if (start < 0) throw new Error(`no JSON in: ${firstLines(output)}`);
  const end = output.lastIndexOf(output[start] === "[" ? "]" : "}");
  return JSON.parse(output.slice(start, end + 1));
}

function firstLines(text: string): string {
  return text.trim().split("\n").slice(0, 12).join("\n").slice(0, 1500);
}
