import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { projectRoot, tempProject } from "./helpers.ts";

/** `edgeclaw cron …` and `edgeclaw system event` against a recording stand-in for /admin. */
const seen: Array<{ method: string; path: string; auth: string; body: unknown }> = [];
const server = createServer(async (req: IncomingMessage, res) => {
  let text = "";
  for await (const chunk of req) text += chunk;
  seen.push({
    method: req.method ?? "",
    path: req.url ?? "",
    auth: req.headers.authorization ?? "",
    body: text ? JSON.parse(text) : undefined,
  });
  res.setHeader("content-type", "application/json");
  const job = {
    id: "j1",
    agentId: "main",
    name: "brief",
    enabled: true,
    schedule: { kind: "cron", expr: "0 7 * * *", tz: "UTC" },
    sessionTarget: "isolated",
    nextRunAt: 1_800_000_000_000,
    lastStatus: null,
  };
  if (req.url === "/admin/cron" && req.method === "POST") return res.end(JSON.stringify({ job }));
  if (req.url === "/admin/cron" && req.method === "GET")
    return res.end(JSON.stringify({ jobs: [job] }));
  if (req.url === "/admin/cron/j1/runs?limit=5")
    return res.end(
      JSON.stringify({
        runs: [
          {
            id: "j1@1",
            status: "ok",
            scheduledFor: 1_800_000_000_000,
            costUsd: "0.001200",
            summary: "done",
            error: null,
          },
        ],
      }),
    );
  if (req.url === "/admin/system/event")
    return res.end(
      JSON.stringify({
        ok: true,
        sessionKey: "agent:main:main",
        mode: "now",
        heartbeat: { ok: false, reason: "no heartbeat for this agent (disabled or no route)" },
      }),
    );
  res.statusCode = 404;
  res.end(JSON.stringify({ error: { message: "nope" } }));
});
let url = "";

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

function edgeclaw(
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [join(projectRoot, "bin", "edgeclaw.mjs"), ...args, "--url", url, "--token", "tok"],
      {
        cwd: projectRoot,
        env: { ...process.env, EDGECLAW_DATA_DIR: join(tempProject(), "data") },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("edgeclaw cron / system event", () => {
  it("cron add sends one schedule, one payload and the announce target", async () => {
    const run = await edgeclaw([
      "cron",
      "add",
      "--name",
      "brief",
      "--cron",
      "0 7 * * *",
      "--tz",
      "America/Los_Angeles",
      "--message",
      "Summarise",
      "--channel",
      "slack",
      "--to",
      "C123",
    ]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /Added j1 \(brief\)/);
    const sent = seen.find((s) => s.method === "POST" && s.path === "/admin/cron")!;
    assert.equal(sent.auth, "Bearer tok");
    assert.deepEqual(sent.body, {
      name: "brief",
      schedule: { kind: "cron", expr: "0 7 * * *", tz: "America/Los_Angeles" },
      payload: { kind: "agentTurn", message: "Summarise" },
      delivery: { mode: "announce", channel: "slack", to: "C123" },
    });
  });

  it("cron add refuses two schedules or half a target before calling the gateway", async () => {
    const before = seen.length;
    const two = await edgeclaw([
      "cron",
      "add",
      "--name",
      "x",
      "--cron",
      "* * * * *",
      "--every",
      "1h",
      "--message",
      "m",
    ]);
    assert.equal(two.status, 2, "a usage error");
    assert.match(two.stderr, /exactly one of --cron, --every, --at/);
    const half = await edgeclaw([
      "cron",
      "add",
      "--name",
      "x",
      "--every",
      "1h",
      "--message",
      "m",
      "--channel",
      "slack",
    ]);
    assert.match(half.stderr, /both --channel and --to/);
    assert.equal(seen.length, before);
  });

  it("cron list, cron runs and system event print what the gateway said", async () => {
    const list = await edgeclaw(["cron", "list"]);
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /j1\s+main\s+brief\s+cron 0 7 \* \* \* UTC/);
    const runs = await edgeclaw(["cron", "runs", "j1", "--limit", "5"]);
    assert.match(runs.stdout, /j1@1\s+ok/);
    const event = await edgeclaw(["system", "event", "--text", "Deploy finished", "--mode", "now"]);
    assert.equal(event.status, 0, event.stderr);
    assert.match(event.stdout, /Heartbeat not woken: no heartbeat/);
    assert.deepEqual(seen.at(-1)!.body, { text: "Deploy finished", mode: "now" });
  });
});
