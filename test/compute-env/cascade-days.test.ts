import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { writeFile } from "../../functions/agent/workspace.ts";
import type { RoutedEvent, RunEvent } from "../../durable-objects/session-api.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { computeEnvFor } from "../../functions/compute-env/config.ts";
import { sandboxRunner } from "../../functions/compute-env/runner.ts";
import { loadManifest } from "../../functions/compute-env/manifest.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  webchatEvent,
} from "../durable-objects/helpers.ts";
import { newScenario } from "../agent/model-helpers.ts";

/**
 * AcaClaw's day-by-day cascade example, end to end: a scripted model in the real SessionDO, the
 * real exec / env_install / env_create tools and cascade, the manifest in Postgres, commands in the
 * real bubblewrap sandbox against the conda stand-in bound at /opt/conda (test/fakes/conda/, its
 * fixture channel solved by its own solver). The "scientist" agent of the test config has
 * computeEnv enabled. The conda log (every conda invocation, in order) shows the seed's commands.
 */
const AGENT = "scientist";
const KEY = `agent:${AGENT}:webchat:days-${crypto.randomUUID().slice(0, 8)}`;
const TAG = crypto.randomUUID().slice(0, 6);
const config = configFromEnv(env as never);
const computeEnv = computeEnvFor(config, AGENT)!;

function event(text: string): RoutedEvent {
  return { ...webchatEvent(KEY, text), agentId: AGENT };
}

async function chat(text: string): Promise<RunEvent[]> {
  return collectRunEvents(await sessionStub(KEY).chat(event(text)));
}

/** Runs one command in the sandbox directly (the same runner the cascade uses), for inspection. */
async function inSandbox(command: string): Promise<string> {
  const runner = sandboxRunner(config, env as never, AGENT, KEY, computeEnv);
  return (await runner.run(`inspect-${crypto.randomUUID()}`, command, { timeoutSeconds: 30 }))
    .output;
}

let logSeen = 0;
/** The conda invocations since the last call. */
async function condaLog(): Promise<string[]> {
  const lines = (await inSandbox("cat /opt/conda/.fake-conda.log")).split("\n").filter(Boolean);
  const fresh = lines.slice(logSeen);
  logSeen = lines.length;
  return fresh;
}

function call(id: string, name: string, args: Record<string, unknown>) {
  return { id: `${id}_${TAG}`, name, arguments: args };
}

/** One day: the user says `text`, the model makes `calls`, then answers. Returns the requests. */
async function day(text: string, calls: ReturnType<typeof call>[], answer = "Done.") {
  const scenario = newScenario(`days-${calls[0]?.id ?? "talk"}`);
  await scriptModel(scenario, [
    ...(calls.length ? [{ type: "tool_calls", calls }] : []),
    { type: "text", text: answer },
  ]);
  await chat(`${text} [scenario:${scenario}]`);
  return modelRequests(scenario);
}

function systemOf(request: { body: { system?: unknown } }): string {
  return JSON.stringify(request.body.system);
}

function toolResults(request: { body: { messages?: unknown } }): string {
  return JSON.stringify(request.body.messages ?? []);
}

async function manifestTrue(): Promise<void> {
  // Every registered env: its packages as `conda list` has them now, and it runs commands.
  for (const e of await loadManifest(env as never, AGENT)) {
    const listed = JSON.parse(await inSandbox(`conda list -n ${e.name} --json`)) as Array<{
      name: string;
      version: string;
    }>;
    expect(Object.fromEntries(listed.map((p) => [p.name, p.version]))).toEqual(e.packages);
    expect(
      await inSandbox(`conda run --no-capture-output -n ${e.name} python -c "print('usable')"`),
    ).toContain("usable");
  }
}

describe("AcaClaw's cascade, day by day", () => {
  it("day 1 → day 15: base env, biology, seaborn, pytorch-cuda → acaclaw-gpu, torchvision, jax → acaclaw-jax; a crash mid-install leaves the manifest true", async () => {
    await condaLog();
    // Day 1: AcaClaw is installed (the image's acaclaw env). The first command runs in it, wrapped.
    await writeFile(
      env as never,
      AGENT,
      "analysis.py",
      "import os\nprint('env', os.environ['CONDA_DEFAULT_ENV'])\n",
    );
    let requests = await day("Run my analysis", [
      call("d1", "exec", { command: "python analysis.py" }),
    ]);
    expect(toolResults(requests[1]!)).toContain("env acaclaw");
    expect(toolResults(requests[1]!)).toContain("[conda env acaclaw: the primary env]");
    expect(await condaLog()).toContain("run --no-capture-output -n acaclaw python analysis.py");

    // Day 2: the biology discipline, merged into acaclaw (npx edgeclaw env add-discipline biology).
    const added = await SELF.fetch("https://edgeclaw.test/admin/env/disciplines", {
      method: "POST",
      headers: { authorization: "Bearer test-gateway-token", "content-type": "application/json" },
      body: JSON.stringify({ agent: AGENT, discipline: "biology" }),
    });
    expect(added.status).toBe(200);
    expect(((await added.json()) as { install: { status: string } }).install.status).toBe(
      "installed",
    );
    expect(
      (await condaLog()).some((l) =>
        l.startsWith("install --dry-run -n acaclaw biopython scikit-bio"),
      ),
    ).toBe(true);

    // Day 5: "install seaborn": no conflict in acaclaw → installed there.
    requests = await day("Install seaborn", [call("d5", "env_install", { packages: ["seaborn"] })]);
    let prompt = systemOf(requests[0]!);
    expect(prompt).toContain("## Computing Environments");
    expect(prompt).toContain("Primary: `acaclaw` (Python 3.12, Biology packages)");
    expect(prompt).toMatch(/biopython 1\.84/);
    expect(prompt).not.toContain("seaborn 0.13.2");
    expect(toolResults(requests[1]!)).toContain("Installed seaborn into acaclaw");
    let log = await condaLog();
    expect(log[0]).toMatch(
      /^install --dry-run -n acaclaw seaborn --json --override-channels -c file:\/\/\/opt\/conda\/channel$/,
    );
    expect(log.filter((l) => l.startsWith("install -n acaclaw seaborn -y"))).toHaveLength(1);

    // Day 8: "install pytorch with CUDA": conflicts with acaclaw (numpy 1.x), no auxiliary yet → a question.
    requests = await day(
      "Install pytorch with CUDA",
      [call("d8", "env_install", { packages: ["pytorch", "pytorch-cuda=12.4"] })],
      "pytorch-cuda conflicts with acaclaw. Create a new environment acaclaw-gpu for GPU computing?",
    );
    prompt = systemOf(requests[0]!);
    expect(prompt).toContain("seaborn 0.13.2");
    expect(prompt).not.toContain("Auxiliary:");
    const question = toolResults(requests[1]!);
    expect(question).toContain("status: needs-new-env");
    expect(question).toContain("acaclaw-gpu");
    log = await condaLog();
    expect(
      log.some((l) => l.startsWith("install --dry-run -n acaclaw pytorch pytorch-cuda=12.4")),
    ).toBe(true);
    expect(log.some((l) => l.startsWith("install -n"))).toBe(false);
    const status = (await (
      await SELF.fetch(`https://edgeclaw.test/admin/env?agent=${AGENT}`, {
        headers: { authorization: "Bearer test-gateway-token" },
      })
    ).json()) as {
      questions: Array<{ id: string; proposal: { name: string } }>;
      r: { kind: string };
    };
    const asked = status.questions.find((q) => q.id === `${AGENT}:d8_${TAG}`);
    expect(asked?.proposal.name).toBe("acaclaw-gpu");
    expect(status.r.kind).not.toBe("conda");

    // … the user says yes: the env is created, registered with its description and reason.
    requests = await day("Yes, create it", [
      call("d8c", "env_create", {
        name: "acaclaw-gpu",
        packages: ["pytorch", "pytorch-cuda=12.4"],
        description: "GPU-accelerated computing (PyTorch, CUDA)",
        reason: "PyTorch CUDA conflicts with numpy 1.x in primary env",
        questionId: `${AGENT}:d8_${TAG}`,
      }),
    ]);
    expect(toolResults(requests[1]!)).toContain("Created env acaclaw-gpu");
    expect((await condaLog()).some((l) => l.startsWith("create -n acaclaw-gpu python=3.12"))).toBe(
      true,
    );

    // Day 10: torchvision: acaclaw conflicts, acaclaw-gpu solves → installed there; train.py is routed.
    await writeFile(
      env as never,
      AGENT,
      "train.py",
      "import torch\nimport os\nprint('env', os.environ['CONDA_DEFAULT_ENV'])\n",
    );
    requests = await day("Install torchvision, then train", [
      call("d10", "env_install", { packages: ["torchvision"] }),
    ]);
    prompt = systemOf(requests[0]!);
    expect(prompt).toContain(
      "Auxiliary: `acaclaw-gpu` (Python 3.12, GPU-accelerated computing (PyTorch, CUDA))",
    );
    expect(prompt).toContain(
      "created because: PyTorch CUDA conflicts with numpy 1.x in primary env",
    );
    expect(toolResults(requests[1]!)).toContain(
      "Installed torchvision into acaclaw-gpu (tried acaclaw: conflict; acaclaw-gpu: solves)",
    );
    log = await condaLog();
    expect(
      log.findIndex((l) => l.startsWith("install --dry-run -n acaclaw torchvision")),
    ).toBeLessThan(
      log.findIndex((l) => l.startsWith("install --dry-run -n acaclaw-gpu torchvision")),
    );
    requests = await day("Train", [
      call("d10t", "exec", { command: "python train.py" }),
      call("d10e", "exec", { command: "conda run -n acaclaw python analysis.py" }),
    ]);
    expect(toolResults(requests[1]!)).toContain("env acaclaw-gpu");
    expect(toolResults(requests[1]!)).toContain("it needs pytorch, which only acaclaw-gpu has");
    log = await condaLog();
    expect(log).toContain("run --no-capture-output -n acaclaw-gpu python train.py");
    // An env named by the command is left alone.
    expect(log).toContain("run -n acaclaw python analysis.py");

    // Day 15: jax: conflicts with acaclaw (numpy) and acaclaw-gpu (CUDA 12.4) → question → acaclaw-jax.
    requests = await day(
      "Install jax with CUDA",
      [call("d15", "env_install", { packages: ["jax", "jaxlib"] })],
      "Create acaclaw-jax?",
    );
    expect(toolResults(requests[1]!)).toContain("status: needs-new-env");
    expect(toolResults(requests[1]!)).toContain("acaclaw-jax");
    requests = await day("Yes", [
      call("d15c", "env_create", {
        name: "acaclaw-jax",
        packages: ["jax", "jaxlib"],
        description: "JAX with CUDA",
        reason: "JAX CUDA conflicts with PyTorch CUDA in acaclaw-gpu",
        questionId: `${AGENT}:d15_${TAG}`,
      }),
    ]);
    expect(toolResults(requests[1]!)).toContain("Created env acaclaw-jax");
    requests = await day("What do I have?", []);
    prompt = systemOf(requests[0]!);
    expect(prompt).toContain("Auxiliary: `acaclaw-gpu`");
    expect(prompt).toContain("Auxiliary: `acaclaw-jax` (Python 3.12, JAX with CUDA)");
    const manifest = (await (
      await SELF.fetch(`https://edgeclaw.test/admin/env?agent=${AGENT}`, {
        headers: { authorization: "Bearer test-gateway-token" },
      })
    ).json()) as {
      manifest: {
        defaultEnv: string;
        environments: Record<string, { type: string; createdReason?: string }>;
      };
    };
    expect(manifest.manifest.defaultEnv).toBe("acaclaw");
    expect(Object.keys(manifest.manifest.environments)).toEqual([
      "acaclaw",
      "acaclaw-gpu",
      "acaclaw-jax",
    ]);
    expect(manifest.manifest.environments["acaclaw-gpu"]).toMatchObject({
      type: "auxiliary",
      createdReason: "PyTorch CUDA conflicts with numpy 1.x in primary env",
    });
    await manifestTrue();

    // A crash in the middle of an install: conda dies (SIGKILL) with half the packages linked.
    await inSandbox("touch /opt/conda/.crash-next-install");
    const before = (await loadManifest(env as never, AGENT)).find(
      (e) => e.name === "acaclaw",
    )!.packages;
    requests = await day("Install lifelines", [
      call("crash", "env_install", { packages: ["lifelines"] }),
    ]);
    expect(toolResults(requests[1]!)).toContain("rolled back to revision");
    expect(
      (await loadManifest(env as never, AGENT)).find((e) => e.name === "acaclaw")!.packages,
    ).toEqual(before);
    await manifestTrue();
    log = await condaLog();
    expect(log.some((l) => l.startsWith("install -n acaclaw --revision"))).toBe(true);

    // The same tool call again (a resumed run): it reads its record, nothing runs twice.
    await condaLog();
    requests = await day("again", [call("d5", "env_install", { packages: ["seaborn"] })]);
    expect(toolResults(requests[1]!)).toContain("Installed seaborn into acaclaw");
    expect(await condaLog()).toEqual([]);
  }, 180_000);
});
