import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { CORE_STACK, DISCIPLINES, R_PACKAGES } from "../../functions/compute-env/disciplines.ts";
import { lockDists } from "../../functions/compute-env/conda-cli.ts";
import { makeCondaInstall } from "../fakes/conda/root.ts";
import { projectRoot } from "./helpers.ts";

/**
 * The computing environment's part of the sandbox image (sandbox/Dockerfile's conda stage), as far
 * as a machine without a Docker engine and without conda-forge can check it: the env files say what
 * functions/compute-env/disciplines.ts says; the stage passes its build arguments to
 * sandbox/env/build-env.sh; and that script, run for real against the conda stand-in (which
 * follows conda's CLI) on the fixture channel, builds one primary env with the chosen disciplines
 * merged in, writes an explicit lock that rebuilds exactly that env elsewhere, and the manifest the
 * gateway seeds from. Not run here: `docker build`, the Miniforge image, a conda-forge solve.
 */
const envDir = join(projectRoot, "sandbox", "env");
const dockerfile = readFileSync(join(projectRoot, "sandbox", "Dockerfile"), "utf8");

function specLines(file: string): string[] {
  return readFileSync(join(envDir, file), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
}

function build(root: string, extra: Record<string, string>) {
  return spawnSync("sh", [join(envDir, "build-env.sh")], {
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      CONDA: join(root, "bin", "conda"),
      CHANNELS: `file://${root}/channel`,
      OUT: join(root, "edgeclaw"),
      ...extra,
    },
  });
}

function condaJson<T>(root: string, args: string[]): T {
  return JSON.parse(execFileSync(join(root, "bin", "conda"), args, { encoding: "utf8" })) as T;
}

function packagesOf(root: string, env: string): Record<string, string> {
  return Object.fromEntries(
    condaJson<Array<{ name: string; version: string }>>(root, ["list", "-n", env, "--json"]).map(
      (p) => [p.name, p.version],
    ),
  );
}

describe("sandbox image: the computing environment", () => {
  it("sandbox/env lists the core stack and the disciplines as disciplines.ts does", () => {
    assert.deepEqual(specLines("acaclaw.txt"), CORE_STACK);
    assert.deepEqual(
      specLines("disciplines.txt").map((line) => line.split(/\s+/)),
      DISCIPLINES.map((d) => [
        d.id,
        d.bundle,
        d.packages.join(","),
        d.rPackages.length ? d.rPackages.join(",") : "-",
      ]),
    );
    assert.match(
      readFileSync(join(envDir, "build-env.sh"), "utf8"),
      /r-base r-irkernel r-essentials/,
    );
    assert.deepEqual(R_PACKAGES, ["r-base", "r-irkernel", "r-essentials"]);
  });

  it("the Dockerfile builds the env in a Miniforge stage with the discipline build arguments, and gives only envs/ and pkgs/ to the sandbox user", () => {
    assert.match(dockerfile, /^FROM condaforge\/miniforge3:\$\{MINIFORGE_VERSION\} AS conda$/m);
    for (const arg of ["ACACLAW_DISCIPLINES", "ACACLAW_WITH_R", "ACACLAW_CHANNELS"])
      assert.match(dockerfile, new RegExp(`^ARG ${arg}=`, "m"));
    assert.match(dockerfile, /DISCIPLINES="\$ACACLAW_DISCIPLINES" WITH_R="\$ACACLAW_WITH_R"/);
    assert.match(dockerfile, /OUT=\/opt\/conda\/edgeclaw/);
    assert.match(dockerfile, /^COPY --from=conda \/opt\/conda \/opt\/conda$/m);
    assert.match(
      dockerfile,
      /^COPY --from=conda --chown=sandbox:sandbox \/opt\/acaclaw-envs \/opt\/conda\/envs$/m,
    );
    // The setuid sweep runs after conda is in place, so it covers conda's files too.
    assert.ok(
      dockerfile.indexOf("COPY --from=conda /opt/conda") <
        dockerfile.indexOf("find / -xdev -perm /6000"),
    );
    assert.match(dockerfile, /PATH=\/opt\/conda\/bin:/);
    const condarc = readFileSync(join(envDir, "condarc"), "utf8");
    assert.match(condarc, /register_envs: false/);
    assert.match(condarc, /pkgs_dirs:\n\s+- \/opt\/conda\/pkgs/);
    assert.equal(spawnSync("sh", ["-n", join(envDir, "build-env.sh")]).status, 0);
  });

  it("build-env.sh builds one primary env with biology + medicine and R merged in, its explicit lock and the manifest", () => {
    const root = makeCondaInstall();
    const result = build(root, { DISCIPLINES: "biology,medclaw", WITH_R: "true" });
    assert.equal(result.status, 0, result.stderr + result.stdout);
    const envs = condaJson<{ envs: string[] }>(root, ["env", "list", "--json"]).envs;
    assert.deepEqual(
      envs,
      [root, join(root, "envs", "acaclaw")],
      "one env, never one per discipline",
    );
    const packages = packagesOf(root, "acaclaw");
    assert.equal(packages.python, "3.12.8");
    for (const name of [
      "numpy",
      "scipy",
      "pandas",
      "matplotlib",
      "jupyter",
      "scikit-learn",
      "biopython",
      "scikit-bio",
      "lifelines",
      "pydicom",
      "r-base",
      "r-irkernel",
      "r-essentials",
      "r-biocmanager",
      "r-survival",
    ])
      assert.ok(packages[name], `${name} in acaclaw`);
    assert.equal(packages.rdkit, undefined, "chemistry was not chosen");

    const manifest = JSON.parse(readFileSync(join(root, "edgeclaw", "env-manifest.json"), "utf8"));
    assert.equal(manifest.defaultEnv, "acaclaw");
    assert.deepEqual(
      { ...manifest.environments.acaclaw, createdAt: undefined },
      {
        type: "primary",
        description: "Base scientific environment + Biology + Medicine",
        pythonVersion: "3.12.8",
        rVersion: "4.4.1",
        createdAt: undefined,
        disciplines: ["biology", "medicine"],
        lockFile: "acaclaw.explicit.txt",
      },
    );

    // The lock rebuilds exactly this env in another conda (what a fresh sandbox does with it).
    const lock = readFileSync(join(root, "edgeclaw", "acaclaw.explicit.txt"), "utf8");
    assert.match(lock, /^@EXPLICIT$/m);
    assert.equal(lockDists(lock).length, Object.keys(packages).length);
    const other = makeCondaInstall();
    const lockFile = join(root, "edgeclaw", "acaclaw.explicit.txt");
    execFileSync(join(other, "bin", "conda"), ["create", "-n", "copy", "--file", lockFile, "-y"]);
    assert.deepEqual(packagesOf(other, "copy"), packages);
  });

  it("without R no R package goes in; an unknown discipline stops the build with the list", () => {
    const root = makeCondaInstall();
    const plain = build(root, { DISCIPLINES: "chemistry", WITH_R: "false" });
    assert.equal(plain.status, 0, plain.stderr);
    const packages = packagesOf(root, "acaclaw");
    assert.ok(packages.rdkit && packages.openbabel);
    assert.deepEqual(
      Object.keys(packages).filter((n) => n.startsWith("r-")),
      [],
    );
    const bad = build(makeCondaInstall(), { DISCIPLINES: "astrology" });
    assert.equal(bad.status, 2);
    assert.match(
      bad.stderr,
      /unknown discipline 'astrology': one of biology chemistry medicine general/,
    );
    const badR = build(makeCondaInstall(), { WITH_R: "yes" });
    assert.equal(badR.status, 2);
    assert.match(badR.stderr, /WITH_R must be true or false/);
  });
});
