import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * A conda root for the tests: the conda stand-in (test/fakes/conda/conda) at <root>/bin/conda and
 * its fixture channel at <root>/channel, bound into the bubblewrap sandbox at /opt/conda as the image
 * has it. Stage 1 is done here as the Dockerfile does it: `conda create -n acaclaw python=3.12
 * numpy=1.26 scipy pandas matplotlib` (AcaClaw's day 1).
 */
const HERE = dirname(fileURLToPath(import.meta.url));

export const SANDBOX_CONDA_PREFIX = "/opt/conda";
export const SANDBOX_CONDA_CHANNEL = `file://${SANDBOX_CONDA_PREFIX}/channel`;

/** A conda root with the stand-in and its channel, and no env yet (what the image's conda stage starts from). */
export function makeCondaInstall(): string {
  const root = mkdtempSync(join(tmpdir(), "edgeclaw-test-conda-"));
  mkdirSync(join(root, "bin"));
  for (const file of ["conda", "conda_solver.py", "conda_files.py"])
    cpSync(join(HERE, file), join(root, "bin", file));
  cpSync(join(HERE, "channel"), join(root, "channel"), { recursive: true });
  return root;
}

export function makeCondaRoot(): string {
  const root = makeCondaInstall();
  execFileSync(join(root, "bin", "conda"), [
    "create",
    "-n",
    "acaclaw",
    "python=3.12",
    "numpy=1.26",
    "scipy",
    "pandas",
    "matplotlib",
    "-y",
    "--json",
    "--override-channels",
    "-c",
    `file://${root}/channel`,
  ]);
  return root;
}
