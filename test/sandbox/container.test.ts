import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { readFile, writeFile } from "../../functions/agent/workspace.ts";
import type { RoutedEvent, RunEvent } from "../../durable-objects/session-api.ts";
import type { SandboxDO } from "../../durable-objects/sandbox.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../durable-objects/helpers.ts";
import { newScenario } from "../agent/model-helpers.ts";
import { containerBackendProblem } from "../../functions/sandbox/backend.ts";
import { containerCostUsd } from "../../functions/sandbox/container-prices.ts";
import type { ExecStatus } from "../../functions/sandbox/wire.ts";

// What test/setup/global.ts provides (that file is typechecked with the Node config, not this one).
declare module "vitest" {
  interface ProvidedContext {
    containerEngineUrl: string;
  }
}

/**
 * The container backend end to end in workerd: a scripted model → the SessionDO → the exec tool →
 * env.SANDBOX (the real SandboxDO, extending @cloudflare/containers' Container) → its ctx.container,
 * which here is the loopback stand-in for the Containers runtime → the fake engine
 * (test/fakes/container-engine.ts) running the sandbox image's host process as a node process in
 * its own pid namespace. The "contained" agent has agents.list[].sandbox.backend "container" and
 * scope "session": one container per session, named `session:<key>`.
 */
const AGENT = "contained";
const engine = inject("containerEngineUrl");

function event(sessionKey: string, text: string): RoutedEvent {
  return { ...webchatEvent(sessionKey, text), agentId: AGENT };
}

async function chat(sessionKey: string, text: string): Promise<RunEvent[]> {
  return collectRunEvents(await sessionStub(sessionKey).chat(event(sessionKey, text)));
}

function doneText(events: RunEvent[]): string {
  const done = events.find((e) => e.type === "done") as { text: string } | undefined;
  return done?.text ?? JSON.stringify(events.at(-1));
}

async function toolResults(scenario: string, index: number): Promise<string> {
  const requests = await modelRequests(scenario);
  return JSON.stringify(requests[index]?.body.messages ?? []);
}

function sessionKey(name: string): string {
  return `agent:${AGENT}:webchat:${name}-${crypto.randomUUID().slice(0, 8)}`;
}

/** The SandboxDO's RPC as the session's container backend sees it (wire bodies are JSON). */
interface SandboxRpc {
  sandbox(
    op: unknown,
  ): Promise<{ status: number; body: Partial<ExecStatus> & Record<string, unknown> }>;
  describe(): Promise<Awaited<ReturnType<SandboxDO["describe"]>>>;
}

function sandboxStub(scope: string): SandboxRpc {
  return env.SANDBOX.getByName(scope) as unknown as SandboxRpc;
}

function sandboxOf(key: string): SandboxRpc {
  return sandboxStub(`session:${key}`);
}

interface EngineLog {
  running: boolean;
  starts: Array<{ env: Record<string, string>; enableInternet: boolean }>;
  intercepted: Array<{ probeStatus: number | string }>;
  exits: number[];
}

async function engineLog(key: string): Promise<EngineLog> {
  const id = env.SANDBOX.idFromName(`session:${key}`).toString();
  return (await (await fetch(`${engine}/_control/containers/${id}`)).json()) as EngineLog;
}

/** SIGKILL at the engine, and the runtime's `running` flips at once, as the platform's does. */
async function crashScope(scope: string): Promise<void> {
  const id = env.SANDBOX.idFromName(scope).toString();
  await fetch(`${engine}/_control/containers/${id}/crash`, { method: "POST" });
  await runInDurableObject(env.SANDBOX.getByName(scope), (_instance, state) =>
    (state.container as unknown as { died(exitCode: number): void }).died(137),
  );
}

async function crashContainer(key: string): Promise<void> {
  await crashScope(`session:${key}`);
}

describe("exec in the sandbox container (SandboxDO)", () => {
  it("runs the command in the scope's container, output to the model, files back to the workspace", async () => {
    const scenario = newScenario("container-basic");
    const key = sessionKey("basic");
    await writeFile(env, AGENT, "input.txt", "from the workspace\n");
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_c_1",
            name: "exec",
            arguments: {
              command:
                'cat input.txt; echo made-in-container > made.txt; echo "secret:${TEST_SANDBOX_OUTBOUND_SECRET:-none}"',
            },
          },
        ],
      },
      { type: "text", text: "Done." },
    ]);
    expect(doneText(await chat(key, `run it [scenario:${scenario}]`))).toBe("Done.");
    const seen = await toolResults(scenario, 1);
    expect(seen).toContain("from the workspace");
    expect(seen).toContain("exit code 0");
    // No Worker variable reaches the container or its commands.
    expect(seen).toContain("secret:none");
    expect((await readFile(env, AGENT, "made.txt"))?.content).toBe("made-in-container\n");
    const log = await engineLog(key);
    expect(log.running).toBe(true);
    expect(log.starts).toHaveLength(1);
    expect(log.starts[0]).toEqual({ env: {}, enableInternet: false, at: expect.any(Number) });
    const state = await sandboxOf(key).describe();
    expect(state).toMatchObject({ running: true, generation: 1, egress: { kind: "none" } });
    // What operators see: the session's report carries the container's state and metered time.
    const report = await sessionStub(key).sandbox();
    expect(report.placement).toMatchObject({ backend: "container", scope: `session:${key}` });
    expect(report.container).toMatchObject({ running: true, generation: 1, sleepAfter: "10m" });
    expect(report.commands).toMatchObject([{ id: "call_c_1", state: "exited", exitCode: 0 }]);
    expect(report.usage.commands).toBe(1);
    expect(report.usage.containerSeconds).toBe(report.usage.seconds);
    expect(report.usage.estimatedUsd).toBeGreaterThanOrEqual(0);
    const usage = JSON.stringify(await chat(key, "/usage cost"));
    expect(usage).toContain("🧰 Sandbox: 1 command");
    expect(usage).toContain("in a container, estimate");
  });
});

describe("a session's background command whose container dies", () => {
  it("is reported lost once (one Exec finished event) and never run again", async () => {
    const scenario = newScenario("container-crash");
    const key = sessionKey("crash");
    const counter = await counterPath();
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_doomed",
            name: "exec",
            arguments: { command: `echo ran >> ${counter}; sleep 60`, background: true },
          },
        ],
      },
      { type: "text", text: "Started." },
      { type: "text", text: "Understood." },
    ]);
    expect(doneText(await chat(key, `go [scenario:${scenario}]`))).toBe("Started.");
    // The crash must come after the command began (a loaded machine can take its time to spawn it).
    let probe = 0;
    await waitFor(async () => {
      const seen = await sandboxOf(key).sandbox(
        startOp(`session:${key}`, `probe-${++probe}`, `test -s ${counter} && echo began`),
      );
      return JSON.stringify(seen).includes("began") ? true : undefined;
    }, 20_000);
    await crashContainer(key);
    // The session's alarm polls the command, learns it is gone, and raises one system event.
    await waitFor(async () => {
      const rows = await runInDurableObject(sessionStub(key), (_i, state) =>
        state.storage.sql
          .exec<{ state: string; result: string | null }>(
            `SELECT state, result FROM exec_calls WHERE call_id = 'call_doomed'`,
          )
          .toArray(),
      );
      return rows[0]?.state === "finished" ? rows[0] : undefined;
    }, 20_000);
    expect(doneText(await chat(key, `and? [scenario:${scenario}]`))).toBe("Understood.");
    const prompt = await toolResults(scenario, 2);
    expect(prompt.match(/Exec finished \(id call_doomed\)/g)?.length).toBe(1);
    expect(prompt).toContain("was lost");
    const log = await engineLog(key);
    expect(log.starts).toHaveLength(1);
    const count = await sandboxOf(key).sandbox(
      startOp(`session:${key}`, "count", `cat ${counter}; rm -f ${counter}`),
    );
    expect(count).toMatchObject({ body: { output: "ran\n" } });
  });
});

function startOp(
  scope: string,
  execId: string,
  command: string,
  overrides: Record<string, unknown> = {},
) {
  return {
    op: "start" as const,
    scope,
    execId,
    command,
    timeoutSeconds: 60,
    waitMs: 2000,
    isolation: "none" as const,
    maxOutputChars: 10_000,
    pendingMaxOutputChars: 10_000,
    syncMaxFiles: 100,
    syncMaxBytes: 1_000_000,
    ...overrides,
  };
}

/** A file outside any container (the fake engine's containers see the test machine's disk). */
async function counterPath(): Promise<string> {
  return `/tmp/edgeclaw-container-counter-${crypto.randomUUID()}`;
}

describe("the sandbox container runs a command once, across its own crash", () => {
  it("a container that dies under a running command: reported lost, never started again, and it does not wake the container", async () => {
    const scope = `test:crash-${crypto.randomUUID().slice(0, 8)}`;
    const stub = sandboxStub(scope);
    const id = env.SANDBOX.idFromName(scope).toString();
    const counter = await counterPath();
    const first = await stub.sandbox(
      startOp(scope, "exec-1", `echo ran >> ${counter}; echo started; sleep 30`, { waitMs: 300 }),
    );
    expect(first).toMatchObject({ status: 200, body: { state: "running", output: "started\n" } });
    await crashScope(scope);

    // The start again (a resumed run whose first answer was lost): recorded here, so never re-run.
    const again = await stub.sandbox(startOp(scope, "exec-1", `echo ran >> ${counter}`));
    expect(again).toMatchObject({ status: 200, body: { execId: "exec-1", state: "lost" } });
    const poll = await stub.sandbox({ op: "poll", scope, execId: "exec-1" });
    expect(poll).toMatchObject({ status: 200, body: { state: "lost" } });
    const log = (await (await fetch(`${engine}/_control/containers/${id}`)).json()) as EngineLog;
    expect(log.starts).toHaveLength(1);
    expect(log.exits).toEqual([137]);
    // The command's own count, read through a fresh command in a new container.
    const count = await stub.sandbox(startOp(scope, "exec-2", `cat ${counter}; rm -f ${counter}`));
    expect(count).toMatchObject({ status: 200, body: { state: "exited", output: "ran\n" } });
    expect(await stub.describe()).toMatchObject({ generation: 2, starts: 2, running: true });
  });

  it("an id the host no longer knows (its container restarted) is lost, not started", async () => {
    const scope = `test:restart-${crypto.randomUUID().slice(0, 8)}`;
    const stub = sandboxStub(scope);
    const counter = await counterPath();
    await stub.sandbox(startOp(scope, "exec-a", `echo a >> ${counter}; sleep 30`, { waitMs: 200 }));
    await crashScope(scope);
    // Another command starts a new container (generation 2) before anyone asks about exec-a.
    await stub.sandbox(startOp(scope, "exec-b", "true"));
    const resumed = await stub.sandbox(startOp(scope, "exec-a", `echo a >> ${counter}`));
    expect(resumed).toMatchObject({ status: 200, body: { state: "lost" } });
    const count = await stub.sandbox(startOp(scope, "exec-c", `cat ${counter}; rm -f ${counter}`));
    expect(count).toMatchObject({ body: { output: "a\n" } });
  });
});

describe("the sandbox container's lifetime and egress", () => {
  it("stays awake past its idle time while a command runs, then sleeps; awake time is counted", async () => {
    const scope = `test:idle-${crypto.randomUUID().slice(0, 8)}`;
    const stub = sandboxStub(scope);
    const id = env.SANDBOX.idFromName(scope).toString();
    await stub.sandbox(startOp(scope, "exec-long", "sleep 1; echo done", { waitMs: 0 }));
    await runInDurableObject(env.SANDBOX.getByName(scope), (instance: SandboxDO) =>
      instance.onActivityExpired(),
    );
    let log = (await (await fetch(`${engine}/_control/containers/${id}`)).json()) as EngineLog;
    expect(log.running).toBe(true);
    // Its end is reported (the session's poll), then nothing holds the container up.
    await waitFor(async () => {
      const answer = await stub.sandbox({ op: "poll", scope, execId: "exec-long", waitMs: 2000 });
      return (answer.body as { state: string }).state === "exited" ? true : undefined;
    });
    await runInDurableObject(env.SANDBOX.getByName(scope), (instance: SandboxDO) =>
      instance.onActivityExpired(),
    );
    await waitFor(async () => {
      log = (await (await fetch(`${engine}/_control/containers/${id}`)).json()) as EngineLog;
      return log.running ? undefined : true;
    });
    expect(log.exits).toEqual([0]);
    const state = await stub.describe();
    expect(state.running).toBe(false);
    expect(state.awakeMsTotal).toBeGreaterThan(900);
    expect(state.openExecs).toBe(0);
  });

  it("an orphaned command (nobody polls it) holds the container only until its own timeout, then one idle period", async () => {
    const scope = `test:orphan-${crypto.randomUUID().slice(0, 8)}`;
    const stub = sandboxStub(scope);
    const id = env.SANDBOX.idFromName(scope).toString();
    const started = Date.now();
    // A 5 s timeout: the first check below must come inside it, and on a loaded two-core machine a
    // start plus one expiry has taken over two seconds.
    await stub.sandbox(startOp(scope, "exec-orphan", "sleep 30", { waitMs: 0, timeoutSeconds: 5 }));
    const expire = () =>
      runInDurableObject(env.SANDBOX.getByName(scope), async (instance: SandboxDO) => {
        instance.sleepAfter = "1s";
        await instance.onActivityExpired();
      });
    const running = async () =>
      ((await (await fetch(`${engine}/_control/containers/${id}`)).json()) as EngineLog).running;
    // Within its timeout it still runs: the container stays up.
    await expire();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await running()).toBe(true);
    // The host kills it at 5 s; one idle period (1 s) after that end, nothing holds the container.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 6_500 - Date.now())));
    // The activity timer fires again each idle period, as the Containers runtime does; on a slow
    // machine the host may report the kill a moment after the first of them.
    await waitFor(async () => {
      await expire();
      return (await running()) ? undefined : true;
    });
    // Before: an unreported command held it for its timeout plus five minutes.
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(await stub.describe()).toMatchObject({ running: false, openExecs: 0 });
  });

  it("an orphan with no timeout holds the container for one idle period after the last time anyone asked", async () => {
    const scope = `test:orphan0-${crypto.randomUUID().slice(0, 8)}`;
    const stub = sandboxStub(scope);
    const id = env.SANDBOX.idFromName(scope).toString();
    await stub.sandbox(
      startOp(scope, "exec-forever", "sleep 300", { waitMs: 0, timeoutSeconds: 0 }),
    );
    const expire = () =>
      runInDurableObject(env.SANDBOX.getByName(scope), async (instance: SandboxDO) => {
        instance.sleepAfter = "1s";
        await instance.onActivityExpired();
      });
    const running = async () =>
      ((await (await fetch(`${engine}/_control/containers/${id}`)).json()) as EngineLog).running;
    await expire();
    expect(await running()).toBe(true);
    // A live session polls at least every 30 s; this one asks once more, then never again.
    await stub.sandbox({ op: "poll", scope, execId: "exec-forever" });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await expire();
    await waitFor(async () => ((await running()) ? undefined : true));
    // Its session asking later learns the command is lost (its container slept), never re-run.
    expect(await stub.sandbox({ op: "poll", scope, execId: "exec-forever" })).toMatchObject({
      body: { state: "lost" },
    });
  });

  it("a command that ended unreported keeps its result for one idle period (the session collects it)", async () => {
    const scope = `test:unread-${crypto.randomUUID().slice(0, 8)}`;
    const stub = sandboxStub(scope);
    await stub.sandbox(startOp(scope, "exec-quick", "echo kept", { waitMs: 0 }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await runInDurableObject(env.SANDBOX.getByName(scope), (instance: SandboxDO) =>
      instance.onActivityExpired(),
    );
    expect(await stub.sandbox({ op: "poll", scope, execId: "exec-quick" })).toMatchObject({
      body: { state: "exited", output: "kept\n" },
    });
  });

  it("egress: off by default, only the operator's hosts when allowed, and never changed under a running command", async () => {
    const scope = `test:egress-${crypto.randomUUID().slice(0, 8)}`;
    const stub = sandboxStub(scope);
    const id = env.SANDBOX.idFromName(scope).toString();
    const hosts = { network: true, allowedHosts: ["pypi.org", "files.pythonhosted.org"] };
    await stub.sandbox(startOp(scope, "exec-net", "sleep 5", { waitMs: 0, ...hosts }));
    let log = (await (await fetch(`${engine}/_control/containers/${id}`)).json()) as EngineLog;
    expect(log.starts[0]?.enableInternet).toBe(false);
    // The library's outbound proxy is in place and refuses a host nobody listed (520).
    expect(log.intercepted.length).toBeGreaterThan(0);
    expect(log.intercepted.every((probe) => probe.probeStatus === 520)).toBe(true);
    expect((await stub.describe()).egress).toEqual({
      kind: "hosts",
      hosts: ["files.pythonhosted.org", "pypi.org"],
    });
    // A command that needs no network while one with network runs: refused, not silently widened.
    const refused = await stub.sandbox(startOp(scope, "exec-none", "true"));
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toContain("network setting");
    await stub.sandbox({ op: "kill", scope, execId: "exec-net" });
    const after = await stub.sandbox(startOp(scope, "exec-none-2", "echo fine"));
    expect(after).toMatchObject({ status: 200, body: { state: "exited", output: "fine\n" } });
    log = (await (await fetch(`${engine}/_control/containers/${id}`)).json()) as EngineLog;
    expect(log.starts.map((start) => start.enableInternet)).toEqual([false, false]);
    expect(await stub.describe()).toMatchObject({ generation: 2, egress: { kind: "none" } });
  });

  it("prices container time from the published rates (an estimate: CPU counted as busy)", () => {
    // basic: 1 GiB × $0.0000025 + 4 GB × $0.00000007 + ¼ vCPU × $0.000020 per second.
    expect(containerCostUsd("basic", 3600)).toBeCloseTo(0.028008, 6);
    expect(containerCostUsd("lite", 3600)).toBeCloseTo(0.007254, 6);
    expect(containerCostUsd("standard-1", 3600)).toBeCloseTo(0.074016, 6);
    expect(containerCostUsd("gpu-huge", 3600)).toBeUndefined();
  });

  it("a Worker deployed without the sandbox container says so instead of failing to construct it", () => {
    expect(containerBackendProblem({ SANDBOX: env.SANDBOX, EDGECLAW_SANDBOX_CONTAINER: "1" })).toBe(
      undefined,
    );
    for (const flag of ["0", undefined])
      expect(
        containerBackendProblem({ SANDBOX: env.SANDBOX, EDGECLAW_SANDBOX_CONTAINER: flag }),
      ).toContain("npx edgeclaw deploy");
  });

  it("refuses a malformed request and answers an unknown id without starting a container", async () => {
    const scope = `test:bad-${crypto.randomUUID().slice(0, 8)}`;
    const stub = sandboxStub(scope);
    expect((await stub.sandbox({ op: "start", scope })).status).toBe(400);
    expect(await stub.sandbox({ op: "poll", scope, execId: "nobody" })).toMatchObject({
      status: 200,
      body: { state: "unknown" },
    });
    expect((await stub.describe()).starts).toBe(0);
  });
});
