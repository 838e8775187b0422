import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readFile } from "../../functions/agent/workspace.ts";
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
 * `/approve <id> allow-always` is durable: the "asker" agent of the test config has its own policy
 * (agents.list[].tools.exec: mode "ask", allowlist ["ls"]) and the companion backend (bubblewrap).
 * A command approved always runs without asking next time, in another session too; a command
 * allow-always cannot bind to runs once and asks again; ask "always" still asks; revoking the entry
 * (DELETE /admin/exec-approvals/:id) makes it ask again. That only the owner may approve is
 * test/commands/approve.test.ts's.
 */
const AGENT = "asker";

function event(sessionKey: string, text: string): RoutedEvent {
  return { ...webchatEvent(sessionKey, text), agentId: AGENT };
}

async function chat(sessionKey: string, text: string): Promise<RunEvent[]> {
  return collectRunEvents(await sessionStub(sessionKey).chat(event(sessionKey, text)));
}

/** The tool result the model saw for `callId`. */
async function resultOf(scenario: string, callId: string): Promise<string> {
  for (const request of (await modelRequests(scenario)).reverse()) {
    const text = JSON.stringify(request.body.messages ?? []);
    const at = text.indexOf(`"tool_use_id":"${callId}"`);
    if (at >= 0) return text.slice(at, at + 600);
  }
  return "";
}

function sessionKey(name: string): string {
  return `agent:${AGENT}:webchat:${name}-${crypto.randomUUID().slice(0, 8)}`;
}

function admin(path: string, init: RequestInit = {}): Promise<Response> {
  return SELF.fetch(`https://edgeclaw.test/admin${path}`, {
    ...init,
    headers: { authorization: "Bearer test-gateway-token" },
  });
}

function exec(id: string, command: string, extra: Record<string, unknown> = {}) {
  return { id, name: "exec", arguments: { command, ...extra } };
}

describe("allow-always", () => {
  it("stores the approved command: it runs without asking from then on, in other sessions too, until revoked", async () => {
    const tag = crypto.randomUUID().slice(0, 6);
    const trusted = `echo always-${tag}`;
    const scenario = newScenario("approve-always");
    const key = sessionKey("always");
    await scriptModel(scenario, [
      { type: "tool_calls", calls: [exec("call_first", `${trusted} >> counter-${tag}.txt`)] },
      { type: "text", text: "Waiting." },
    ]);
    await chat(key, `go [scenario:${scenario}]`);
    expect(await resultOf(scenario, "call_first")).toContain("approval-pending");
    // A redirection cannot be bound: approved once, stored nowhere.
    const once = JSON.stringify(await chat(key, "/approve call_first allow-always"));
    expect(once).toContain("Allowed once only");
    await waitFor(async () => (await readFile(env, AGENT, `counter-${tag}.txt`)) ?? undefined);

    const second = newScenario("approve-always-2");
    await scriptModel(second, [
      { type: "tool_calls", calls: [exec("call_plain", trusted)] },
      { type: "text", text: "Waiting again." },
    ]);
    await chat(key, `again [scenario:${second}]`);
    expect(await resultOf(second, "call_plain")).toContain("approval-pending");
    const stored = JSON.stringify(await chat(key, "/approve call_plain allow-always"));
    expect(stored).toContain("From now on it runs without asking");

    // Another session of the same agent: the same command runs at once; others still ask.
    const other = sessionKey("always-other");
    const third = newScenario("approve-always-3");
    await scriptModel(third, [
      {
        type: "tool_calls",
        calls: [
          exec("call_again", trusted),
          exec("call_spaced", trusted.replace(" ", "   ")),
          exec("call_different", `echo other-${tag}`),
          exec("call_piped", `${trusted} | wc -l`),
          exec("call_forced", trusted, { ask: "always" }),
        ],
      },
      { type: "text", text: "Done." },
    ]);
    await chat(other, `run them [scenario:${third}]`);
    expect(await resultOf(third, "call_again")).toContain(`always-${tag}`);
    expect(await resultOf(third, "call_again")).toContain("exit code 0");
    expect(await resultOf(third, "call_spaced")).toContain("exit code 0");
    for (const asked of ["call_different", "call_piped", "call_forced"])
      expect(await resultOf(third, asked)).toContain("approval-pending");

    const listed = (await (await admin(`/exec-approvals?agent=${AGENT}`)).json()) as {
      entries: Array<{
        id: string;
        segment: string;
        approvedBy: string | null;
        lastUsedAt: string | null;
      }>;
    };
    const entry = listed.entries.find((e) => e.segment === trusted);
    expect(entry).toBeDefined();
    expect(entry?.approvedBy).toBeTruthy();
    expect(entry?.lastUsedAt).not.toBeNull();
    expect(listed.entries.some((e) => e.segment.includes("counter-"))).toBe(false);

    expect((await admin(`/exec-approvals/${entry!.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await admin(`/exec-approvals/${entry!.id}`, { method: "DELETE" })).status).toBe(404);
    const fourth = newScenario("approve-always-4");
    await scriptModel(fourth, [
      { type: "tool_calls", calls: [exec("call_revoked", trusted)] },
      { type: "text", text: "Asked." },
    ]);
    await chat(other, `once more [scenario:${fourth}]`);
    expect(await resultOf(fourth, "call_revoked")).toContain("approval-pending");
    const audit = (await (await admin("/audit?action=exec.approval&limit=50")).json()) as {
      entries: Array<{ detail: { id?: string; alwaysAllowed?: string[]; storedNothing?: string } }>;
    };
    const decisions = audit.entries.filter((e) =>
      ["call_first", "call_plain"].includes(e.detail.id ?? ""),
    );
    expect(decisions.find((e) => e.detail.id === "call_plain")?.detail.alwaysAllowed).toEqual([
      trusted,
    ]);
    expect(decisions.find((e) => e.detail.id === "call_first")?.detail.storedNothing).toBeTruthy();
  });

  it("the agent's own policy (agents.list[].tools.exec): its allowlist runs without asking, the rest asks", async () => {
    const scenario = newScenario("approve-policy");
    const key = sessionKey("policy");
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [exec("call_ls", "ls -a"), exec("call_cat", "cat /etc/hostname")],
      },
      { type: "text", text: "Ok." },
    ]);
    await chat(key, `look [scenario:${scenario}]`);
    expect(await resultOf(scenario, "call_ls")).toContain("exit code 0");
    expect(await resultOf(scenario, "call_cat")).toContain("approval-pending");
    // The global policy (tools.exec: full) is untouched: the sandboxed agent runs the same at once.
  });
});
