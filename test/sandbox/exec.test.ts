import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readFile, writeFile } from "../../functions/agent/workspace.ts";
import type { RoutedEvent, RunEvent } from "../../durable-objects/session-api.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../durable-objects/helpers.ts";
import { newScenario } from "../agent/model-helpers.ts";

/**
 * exec and process end to end in workerd: a scripted model → the SessionDO's run → the exec tool →
 * the signed channel to the companion's sandbox host (test/setup/global.ts starts the real one, so
 * commands run in bubblewrap) → the result back to the model, and the workspace synced both ways.
 * The "sandboxed" agent of the test config has agents.list[].sandbox.backend "companion".
 */
const AGENT = "sandboxed";

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

/** The tool results the model saw in its request number `index`. */
async function toolResults(scenario: string, index: number): Promise<string> {
  const requests = await modelRequests(scenario);
  return JSON.stringify(requests[index]?.body.messages ?? []);
}

function sessionKey(name: string): string {
  return `agent:${AGENT}:webchat:${name}-${crypto.randomUUID().slice(0, 8)}`;
}

describe("exec in the bubblewrap sandbox", () => {
  it("runs the command, the output reaches the model, and a file it wrote is readable with read", async () => {
    const scenario = newScenario("exec-basic");
    const key = sessionKey("basic");
    await writeFile(env, AGENT, "input.txt", "from the workspace\n");
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_exec_1",
            name: "exec",
            arguments: { command: "cat input.txt; echo made-in-sandbox > made.txt; echo exit-ok" },
          },
        ],
      },
      {
        type: "tool_calls",
        calls: [{ id: "call_read_1", name: "read", arguments: { path: "made.txt" } }],
      },
      { type: "text", text: "All done." },
    ]);
    const events = await chat(key, `run it [scenario:${scenario}]`);
    expect(doneText(events)).toBe("All done.");
    const second = await toolResults(scenario, 1);
    expect(second).toContain("from the workspace");
    expect(second).toContain("exit-ok");
    expect(second).toContain("exit code 0");
    expect(await toolResults(scenario, 2)).toContain("made-in-sandbox");
    expect((await readFile(env, AGENT, "made.txt"))?.content).toBe("made-in-sandbox\n");
  });

  it("a background command: process poll/log see it, kill ends it, and its end arrives once as a system event", async () => {
    const scenario = newScenario("exec-bg");
    const key = sessionKey("bg");
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_bg_1",
            name: "exec",
            arguments: { command: "echo started; sleep 1; echo finished", background: true },
          },
          {
            id: "call_sleeper",
            name: "exec",
            arguments: { command: "echo zzz; sleep 60", yieldMs: 200 },
          },
        ],
      },
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_poll",
            name: "process",
            arguments: { action: "poll", sessionId: "call_sleeper" },
          },
          {
            id: "call_log",
            name: "process",
            arguments: { action: "log", sessionId: "call_sleeper" },
          },
          {
            id: "call_kill",
            name: "process",
            arguments: { action: "kill", sessionId: "call_sleeper" },
          },
          { id: "call_list", name: "process", arguments: { action: "list" } },
        ],
      },
      { type: "text", text: "Started." },
      { type: "text", text: "Noted." },
    ]);
    expect(doneText(await chat(key, `go [scenario:${scenario}]`))).toBe("Started.");
    const first = await toolResults(scenario, 1);
    expect(first).toContain("status: running (id call_bg_1)");
    expect(first).toContain("status: running (id call_sleeper)");
    const second = await toolResults(scenario, 2);
    expect(second).toContain("zzz");
    expect(second).toContain("killed by SIGKILL");
    expect(second).toMatch(/call_sleeper +exited/);
    // The background command ends on its own; the alarm's poll records it and raises one event.
    await waitFor(async () => {
      const rows = await sessionStub(key).history(50);
      return rows.length > 0;
    });
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(doneText(await chat(key, `what happened? [scenario:${scenario}]`))).toBe("Noted.");
    const prompt = await toolResults(scenario, 3);
    expect(prompt.match(/Exec finished \(id call_bg_1\)/g)?.length).toBe(1);
    expect(prompt).toContain("exited with code 0");
    expect(prompt).toContain("finished");
    // The killed command was in the foreground turn: no event for it (it was seen there).
    expect(prompt).not.toContain("Exec finished (id call_sleeper)");
    // Metered once each, however often their ends were read (alarm polls, process poll, kill).
    const report = await sessionStub(key).sandbox();
    expect(report.usage.commands).toBe(2);
    expect(report.usage.seconds).toBeGreaterThan(1);
    expect(report.usage.containerSeconds).toBe(0);
    expect(report.placement).toMatchObject({ backend: "companion", network: false });
    expect(report.commands.map((c) => [c.id, c.state, c.background])).toEqual(
      expect.arrayContaining([
        ["call_bg_1", "exited", true],
        ["call_sleeper", "exited", true],
      ]),
    );
  });

  it("pty: true reaches the sandbox: the command runs on a terminal", async () => {
    const scenario = newScenario("exec-pty");
    const key = sessionKey("pty");
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_pty",
            name: "exec",
            arguments: { command: "test -t 1 && echo terminal-yes || echo terminal-no", pty: true },
          },
          {
            id: "call_nopty",
            name: "exec",
            arguments: { command: "test -t 1 && echo terminal-yes || echo terminal-no" },
          },
        ],
      },
      { type: "text", text: "Checked." },
    ]);
    expect(doneText(await chat(key, `tty? [scenario:${scenario}]`))).toBe("Checked.");
    const seen = await toolResults(scenario, 1);
    expect(seen).toMatch(/"tool_use_id":"call_pty","content":"terminal-yes/);
    expect(seen).toMatch(/"tool_use_id":"call_nopty","content":"terminal-no/);
  });

  it("/stop kills the session's running commands", async () => {
    const scenario = newScenario("exec-stop");
    const key = sessionKey("stop");
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          { id: "call_long", name: "exec", arguments: { command: "sleep 120", background: true } },
        ],
      },
      { type: "text", text: "Running." },
      { type: "text", text: "Checked." },
    ]);
    expect(doneText(await chat(key, `start [scenario:${scenario}]`))).toBe("Running.");
    const stop = await chat(key, "/stop");
    expect(JSON.stringify(stop)).toContain("Killed 1 command in the sandbox.");
  });

  it('ask "always": the command waits for /approve and runs only then; a denied one never runs', async () => {
    const scenario = newScenario("exec-ask");
    const key = sessionKey("ask");
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_ask",
            name: "exec",
            arguments: { command: "echo ran >> approved-counter.txt", ask: "always" },
          },
          {
            id: "call_deny",
            name: "exec",
            arguments: { command: "echo ran >> denied-counter.txt", ask: "always" },
          },
        ],
      },
      { type: "text", text: "Waiting for approval." },
      { type: "text", text: "Thanks." },
    ]);
    expect(doneText(await chat(key, `please [scenario:${scenario}]`))).toBe(
      "Waiting for approval.",
    );
    expect(await toolResults(scenario, 1)).toContain("status: approval-pending (id call_ask)");
    expect(await readFile(env, AGENT, "approved-counter.txt")).toBeNull();

    expect(JSON.stringify(await chat(key, "/approve call_deny deny"))).toContain("Denied");
    expect(JSON.stringify(await chat(key, "/approve call_ask allow-once"))).toContain("Approved");
    await waitFor(
      async () => (await readFile(env, AGENT, "approved-counter.txt")) ?? undefined,
      15_000,
    );
    expect((await readFile(env, AGENT, "approved-counter.txt"))?.content).toBe("ran\n");
    expect(await readFile(env, AGENT, "denied-counter.txt")).toBeNull();
    expect(JSON.stringify(await chat(key, "/approve call_ask allow-once"))).toContain(
      "No command waits for approval",
    );
  });

  it("offers exec only to agents with a sandbox backend, and only to the owner", async () => {
    const { createToolset } = await import("../../functions/agent/tools/index.ts");
    const { configFromEnv } = await import("../../functions/channels/gateway-config.ts");
    const config = configFromEnv(env as never);
    const names = (agentId: string, senderIsOwner: boolean) =>
      createToolset(config, agentId, { senderIsOwner }).map((tool) => tool.name);
    expect(names(AGENT, true)).toEqual(expect.arrayContaining(["exec", "process", "apply_patch"]));
    expect(names(AGENT, false)).not.toContain("exec");
    expect(names(AGENT, false)).not.toContain("process");
    expect(names("main", true)).not.toContain("exec");
  });
});
