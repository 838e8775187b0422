import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { simpleSolve } from "@conda-org/rattler";
import { parseSolve, specName } from "../../functions/compute-env/conda-cli.ts";
import { makeCondaRoot } from "../fakes/conda/root.ts";

/**
 * The conda stand-in's solver, checked against a real one. The cascade's decisions in the
 * day-by-day test (test/compute-env/cascade-days.test.ts) come from the stand-in's small solver
 * over the fixture channel; here every one of those dry-runs is also solved by rattler (the
 * conda-forge solver library behind pixi and mamba's successor, @conda-org/rattler, WASM) over the
 * same channel, served on loopback as a channel is (noarch/repodata.json over HTTP). Both must say
 * the same — solves, conflicts, or names nothing the channel has — and where both solve, the env
 * the stand-in installs must be the one rattler's solution describes, package for package.
 * Rattler solves an env from its requested specs (what conda-meta/history records), as the
 * stand-in does.
 */
const FIXTURE = join(import.meta.dirname, "..", "fakes", "conda", "channel", "noarch");
let server: Server;
let channelUrl: string;
let root: string;

before(async () => {
  const repodata = readFileSync(join(FIXTURE, "repodata.json"));
  server = createServer((request, response) => {
    if (request.url === "/fixture/noarch/repodata.json") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(repodata);
    } else {
      // The compressed and sharded forms rattler asks for first: this channel has only the JSON.
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  channelUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/fixture`;
  root = makeCondaRoot();
});

after(() => server?.close());

type Verdict = "solves" | "conflict" | "not-found";

/** The stand-in's answer, read by the cascade's own parser. */
function standIn(verb: "install" | "create", env: string, specs: string[]): Verdict {
  const result = spawnSync(
    join(root, "bin", "conda"),
    [
      verb,
      "--dry-run",
      "-n",
      env,
      ...specs,
      "--json",
      "--override-channels",
      "-c",
      `file://${root}/channel`,
    ],
    { encoding: "utf8" },
  );
  const outcome = parseSolve(result.stdout, result.status);
  if (outcome.kind === "error")
    assert.fail(`the stand-in failed: ${result.stdout}${result.stderr}`);
  return outcome.kind === "ok" ? "solves" : outcome.kind;
}

/** Rattler's answer for an env of these requested specs: its solution, or why not. */
async function rattler(
  specs: string[],
): Promise<{ verdict: Verdict; solution?: Record<string, string>; message?: string }> {
  try {
    const solved = await simpleSolve(specs, [channelUrl], ["noarch"], []);
    return {
      verdict: "solves",
      solution: Object.fromEntries(solved.map((p) => [p.packageName, p.version])),
    };
  } catch (error) {
    const message = String(error);
    const missing = /No candidates were found for (\S+)/.exec(message)?.[1];
    const requested = specs.map(specName);
    return {
      verdict:
        missing && requested.includes(missing.toLowerCase()) && !/would require/.test(message)
          ? "not-found"
          : "conflict",
      message,
    };
  }
}

function installed(env: string): Record<string, string> {
  const list = JSON.parse(
    execFileSync(join(root, "bin", "conda"), ["list", "-n", env, "--json"], { encoding: "utf8" }),
  ) as Array<{ name: string; version: string }>;
  return Object.fromEntries(list.map((p) => [p.name, p.version]));
}

function run(verb: "install" | "create", env: string, specs: string[]): void {
  execFileSync(join(root, "bin", "conda"), [
    verb,
    "-n",
    env,
    ...specs,
    "-y",
    "--json",
    "--override-channels",
    "-c",
    `file://${root}/channel`,
  ]);
}

describe("the conda stand-in's solver agrees with rattler on the cascade's decisions", () => {
  it("day 2 → day 15: every dry-run's verdict, and every env installed as rattler solves it", async () => {
    // What each env was asked for (conda-meta/history's specs), as makeCondaRoot's day 1 made acaclaw.
    const requested: Record<string, string[]> = {
      acaclaw: ["python=3.12", "numpy=1.26", "scipy", "pandas", "matplotlib"],
    };
    const decisions: string[] = [];

    async function decide(
      verb: "install" | "create",
      env: string,
      specs: string[],
      expected: Verdict,
    ) {
      const want = [...(verb === "install" ? requested[env]! : []), ...specs];
      const ours = standIn(verb, env, specs);
      const theirs = await rattler(want);
      decisions.push(`${verb} ${env} ${specs.join(" ")}: ${ours}`);
      assert.equal(
        ours,
        theirs.verdict,
        `${verb} -n ${env} ${specs.join(" ")}: stand-in ${ours}, rattler ${theirs.verdict} ${theirs.message ?? ""}`,
      );
      assert.equal(ours, expected, `${verb} -n ${env} ${specs.join(" ")}`);
      if (ours !== "solves") return;
      run(verb, env, specs);
      requested[env] = want;
      assert.deepEqual(installed(env), theirs.solution, `${env} after ${verb} ${specs.join(" ")}`);
    }

    await decide("install", "acaclaw", ["biopython", "scikit-bio"], "solves"); // day 2: biology
    await decide("install", "acaclaw", ["seaborn"], "solves"); // day 5
    await decide("install", "acaclaw", ["pytorch", "pytorch-cuda=12.4"], "conflict"); // day 8
    // The new env as create-env.ts makes it: the primary's Python and four of the core stack.
    const base = ["python=3.12", "numpy", "scipy", "pandas", "matplotlib"];
    await decide("create", "acaclaw-gpu", [...base, "pytorch", "pytorch-cuda=12.4"], "solves");
    await decide("install", "acaclaw", ["torchvision"], "conflict"); // day 10
    await decide("install", "acaclaw-gpu", ["torchvision"], "solves");
    await decide("install", "acaclaw", ["jax", "jaxlib"], "conflict"); // day 15
    await decide("install", "acaclaw-gpu", ["jax", "jaxlib"], "conflict");
    await decide("create", "acaclaw-jax", [...base, "jax", "jaxlib"], "solves");
    // Stage 2 and R on the primary, and a name the channel does not have.
    await decide(
      "install",
      "acaclaw",
      ["lifelines", "pydicom", "r-base", "r-irkernel", "r-essentials", "r-survival"],
      "solves",
    );
    await decide("install", "acaclaw", ["no-such-package"], "not-found");
    assert.equal(decisions.length, 11);
  });
});
