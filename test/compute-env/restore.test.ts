import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { computeEnvFor } from "../../functions/compute-env/config.ts";
import { installPackages, type CascadeDeps } from "../../functions/compute-env/cascade.ts";
import { createEnv } from "../../functions/compute-env/create-env.ts";
import { envStatus } from "../../functions/compute-env/operator.ts";
import { lockDists } from "../../functions/compute-env/conda-cli.ts";
import { getInstall } from "../../functions/compute-env/installs.ts";
import {
  loadManifest,
  refreshPackages,
  registerEnv,
} from "../../functions/compute-env/manifest.ts";
import { sandboxRunner } from "../../functions/compute-env/runner.ts";
import { condaWrapped } from "../../functions/agent/tools/exec-conda.ts";
import type { ToolContext } from "../../functions/agent/types.ts";
import acaclawTxt from "../../sandbox/env/acaclaw.txt?raw";
import buildEnvSh from "../../sandbox/env/build-env.sh?raw";
import disciplinesTxt from "../../sandbox/env/disciplines.txt?raw";

/**
 * Envs recreated from their lock when a sandbox comes back fresh. In the real bubblewrap sandbox, a
 * conda root of its own (the conda stand-in copied to /opt/conda/rroot, so the day-by-day test's
 * root and log are untouched) is built as the image's conda stage builds it — sandbox/env/
 * build-env.sh with chemistry — and copied aside as "the image". The agent's manifest is seeded
 * from what the image holds; an install and a new env change it; then the root is put back to the
 * image (a container that slept and started again) and the next wrapped command finds the new env
 * gone and the primary behind: both are rebuilt from their explicit locks (`conda create|install
 * --file`) before the command, once, and the manifest equals what conda lists. A lock that cannot
 * be fetched leaves nothing half-made and is said in the command's note.
 */
const AGENT = "restorer";
const ROOT = "/opt/conda/rroot";
const KEY = `agent:${AGENT}:webchat:restore-${crypto.randomUUID().slice(0, 8)}`;
const raw = JSON.parse((env as { EDGECLAW_CONFIG: string }).EDGECLAW_CONFIG);
raw.agents.list.push({
  id: AGENT,
  sandbox: { backend: "companion", mode: "all", scope: "agent" },
  computeEnv: {
    enabled: true,
    primary: "rlab",
    condaPrefix: ROOT,
    channels: [`file://${ROOT}/channel`],
  },
});
const config = configFromEnv({ EDGECLAW_CONFIG: JSON.stringify(raw) });
const computeEnv = computeEnvFor(config, AGENT)!;
const runner = sandboxRunner(config, env as never, AGENT, KEY, computeEnv);
const deps: CascadeDeps = { db: env as never, runner, config: computeEnv, agentId: AGENT };
const ctx = { config, env, agentId: AGENT, sessionKey: KEY } as unknown as ToolContext;

async function sh(command: string): Promise<string> {
  const run = await runner.run(`inspect-${crypto.randomUUID()}`, command, { timeoutSeconds: 60 });
  expect(run.exitCode, run.output).toBe(0);
  return run.output;
}

function heredoc(path: string, text: string): string {
  return `cat > ${path} <<'EDGECLAW_TEST_EOF'\n${text.trimEnd()}\nEDGECLAW_TEST_EOF`;
}

let logSeen = 0;
async function condaLog(): Promise<string[]> {
  const lines = (await sh(`cat ${ROOT}/.fake-conda.log 2>/dev/null || true`))
    .split("\n")
    .filter(Boolean);
  const fresh = lines.slice(logSeen);
  logSeen = lines.length;
  return fresh;
}

async function listedIn(name: string): Promise<Record<string, string>> {
  const list = JSON.parse(await sh(`${ROOT}/bin/conda list -n ${name} --json`)) as Array<{
    name: string;
    version: string;
  }>;
  return Object.fromEntries(list.map((p) => [p.name, p.version]));
}

async function manifestTrue(): Promise<void> {
  for (const e of await loadManifest(env as never, AGENT)) {
    expect(await listedIn(e.name)).toEqual(e.packages);
    expect(lockDists(e.explicitLock!)).toHaveLength(Object.keys(e.packages).length);
  }
}

describe("envs recreated from their lock in a fresh sandbox", () => {
  it("seeds the manifest from the image, keeps each env's lock, and rebuilds what a fresh sandbox lacks before the first wrapped command", async () => {
    // The image's conda stage: the stand-in and its channel, then build-env.sh with chemistry.
    await sh(
      [
        `rm -rf ${ROOT} ${ROOT}-image && mkdir -p ${ROOT}/bin ${ROOT}/src`,
        `cp /opt/conda/bin/conda /opt/conda/bin/conda_*.py ${ROOT}/bin/ && cp -r /opt/conda/channel ${ROOT}/`,
        heredoc(`${ROOT}/src/acaclaw.txt`, acaclawTxt),
        heredoc(`${ROOT}/src/disciplines.txt`, disciplinesTxt),
        heredoc(`${ROOT}/src/build-env.sh`, buildEnvSh),
        `CONDA=${ROOT}/bin/conda ENV_NAME=rlab CHANNELS=file://${ROOT}/channel DISCIPLINES=chemistry OUT=${ROOT}/edgeclaw sh ${ROOT}/src/build-env.sh > /dev/null`,
        `rm -f ${ROOT}/.fake-conda.log && cp -a ${ROOT} ${ROOT}-image`,
      ].join("\n"),
    );

    // The first wrapped command: detection registers rlab as the image describes it, with its lock.
    let wrapped = (await condaWrapped(ctx, "python -c 'print(1)'", "first"))!;
    expect(wrapped.env).toBe("rlab");
    const [primary] = await loadManifest(env as never, AGENT);
    expect(primary).toMatchObject({
      name: "rlab",
      type: "primary",
      description: "Base scientific environment + Chemistry",
      disciplines: ["chemistry"],
    });
    expect(primary!.packages.rdkit).toBeTruthy();
    expect(primary!.explicitLock).toContain(`file://${ROOT}/channel/noarch/rdkit-`);
    await manifestTrue();

    // Changes keep the lock current: seaborn into rlab, a new env rlab-torch.
    expect(
      (await installPackages(deps, { id: `${AGENT}:seaborn`, packages: ["seaborn"] })).status,
    ).toBe("installed");
    const created = await createEnv(deps, {
      id: `${AGENT}:torch`,
      name: "rlab-torch",
      packages: ["pytorch"],
      description: "PyTorch",
      reason: "test",
    });
    expect(created.status).toBe("created");
    await manifestTrue();
    const before = await loadManifest(env as never, AGENT);
    expect(before.map((e) => e.name)).toEqual(["rlab", "rlab-torch"]);
    expect(before[0]!.explicitLock).toContain("/seaborn-0.13.2-");

    // The sandbox comes back from its image: rlab-torch is gone, rlab has no seaborn.
    await sh(`rm -rf ${ROOT} && cp -a ${ROOT}-image ${ROOT}`);
    logSeen = 0;
    expect((await listedIn("rlab")).seaborn).toBeUndefined();
    wrapped = (await condaWrapped(ctx, "python -c 'print(2)'", "after-restart"))!;
    expect(wrapped.reason).toContain(
      "rlab was behind its lock in this sandbox and was brought back from its lock",
    );
    expect(wrapped.reason).toContain("rlab-torch was missing from this sandbox and was recreated");
    const log = await condaLog();
    expect(log).toContain("install -n rlab --file /tmp/edgeclaw-rlab.explicit.txt -y --json");
    expect(log).toContain(
      "create -n rlab-torch --file /tmp/edgeclaw-rlab-torch.explicit.txt -y --json",
    );
    // No solve, no channel: only the lock's own URLs.
    expect(log.some((l) => l.includes("--dry-run"))).toBe(false);
    expect(await loadManifest(env as never, AGENT)).toEqual(
      before.map((e) => ({ ...e, updatedAt: expect.any(String) })),
    );
    await manifestTrue();
    expect((await listedIn("rlab")).seaborn).toBe("0.13.2");
    const recreate = await getInstall(env as never, `${AGENT}:after-restart.restore.rlab-torch`);
    expect(recreate).toMatchObject({
      kind: "recreate",
      status: "installed",
      envName: "rlab-torch",
    });
    const restore = await getInstall(env as never, `${AGENT}:after-restart.restore.rlab`);
    expect(restore).toMatchObject({ kind: "restore", status: "installed", envName: "rlab" });
    expect(restore!.changes!.link.map((p) => p.name)).toEqual(["seaborn"]);
    // The wrapped command itself runs in the rebuilt env.
    expect(await sh(wrapped.command)).toContain("2");

    // Nothing to rebuild now; and the same call again (a resumed run) runs no conda at all.
    await condaLog();
    await condaWrapped(ctx, "python -c 'print(3)'", "later");
    await condaWrapped(ctx, "python -c 'print(2)'", "after-restart");
    expect(await condaLog()).toEqual([]);

    // A lock that cannot be fetched: nothing half-made stays, the command's note says why.
    const torch = (await loadManifest(env as never, AGENT)).find((e) => e.name === "rlab-torch")!;
    await refreshPackages(env as never, AGENT, "rlab-torch", torch.packages, {
      explicitLock: `${torch.explicitLock!.trimEnd()}\nfile://${ROOT}/channel/noarch/gone-1.0-0.tar.bz2\n`,
    });
    await sh(`rm -rf ${ROOT}/envs/rlab-torch`);
    wrapped = (await condaWrapped(ctx, "python -c 'print(4)'", "broken-lock"))!;
    expect(wrapped.reason).toContain("rlab-torch is not as the manifest says in this sandbox");
    expect(wrapped.reason).toContain("gone-1.0-0.tar.bz2'. [Errno 2] No such file or directory");
    expect(wrapped.env).toBe("rlab");
    expect(await sh(`test -e ${ROOT}/envs/rlab-torch && echo there || echo removed`)).toContain(
      "removed",
    );
    // One whose packages are on a host this sandbox cannot reach is refused before anything runs.
    await refreshPackages(env as never, AGENT, "rlab-torch", torch.packages, {
      explicitLock: torch.explicitLock!.replace(
        `file://${ROOT}/channel`,
        "https://conda.anaconda.org/conda-forge",
      ),
    });
    await condaLog();
    wrapped = (await condaWrapped(ctx, "python -c 'print(5)'", "no-network"))!;
    expect(wrapped.reason).toContain("this sandbox has no network");
    expect(await condaLog()).toEqual([]);

    // An env changed behind the cascade's back (a conda install by hand): env status lists its
    // packages and its lock again, so a later rebuild brings that back too.
    await sh(
      `${ROOT}/bin/conda install -n rlab pillow -y --json --override-channels -c file://${ROOT}/channel > /dev/null`,
    );
    const status = await envStatus(deps, `${AGENT}:status-${crypto.randomUUID()}`);
    const rlab = status.envs.find((e) => e.name === "rlab")!;
    expect(rlab.packages.pillow).toBe("11.0.0");
    expect(rlab.explicitLock).toContain("/pillow-11.0.0-");
  }, 120_000);

  it("a sandbox that cannot be reached does not stop the command: it runs wrapped, and its note says the envs were not checked", async () => {
    const agent = `unreachable${crypto.randomUUID().slice(0, 6)}`;
    // The companion the sandbox requests go to is not there (nothing listens on port 9).
    const unreachableConfig = JSON.parse((env as { EDGECLAW_CONFIG: string }).EDGECLAW_CONFIG);
    unreachableConfig.companion.url = "http://127.0.0.1:9";
    unreachableConfig.agents.list.push({
      id: agent,
      sandbox: { backend: "companion", mode: "all", scope: "agent" },
      computeEnv: { enabled: true, channels: ["file:///opt/conda/channel"] },
    });
    await registerEnv(env as never, agent, {
      name: "acaclaw",
      type: "primary",
      description: "Base scientific environment",
      packages: { python: "3.12.8" },
      explicitLock: "@EXPLICIT\nfile:///opt/conda/channel/noarch/python-3.12.8-h_0.tar.bz2\n",
    });
    const unreachable = {
      config: configFromEnv({ EDGECLAW_CONFIG: JSON.stringify(unreachableConfig) }),
      env,
      agentId: agent,
      sessionKey: `agent:${agent}:main`,
    } as unknown as ToolContext;
    const wrapped = (await condaWrapped(unreachable, "python analysis.py", "c1"))!;
    expect(wrapped.command).toBe("conda run --no-capture-output -n acaclaw python analysis.py");
    expect(wrapped.reason).toMatch(
      /^the primary env; the envs could not be checked against their locks: /,
    );
  });
});
