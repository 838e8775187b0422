import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { projectRoot, tempProject } from "./helpers.ts";

/** `edgeclaw channels mattermost register-commands | commands` against a recording stand-in for /admin (the route itself: test/channels/mattermost/native-commands.test.ts). */
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
  if (req.url === "/admin/channels/mattermost/commands" && req.method === "POST") {
    return res.end(
      JSON.stringify({
        accountId: "ops",
        callbackUrl: "https://gw.example/api/channels/mattermost/command",
        botUserId: "bot1",
        results: [
          { teamId: "team1", trigger: "oc_status", outcome: "created" },
          { teamId: "team2", trigger: "oc_help", outcome: "skipped-foreign" },
        ],
      }),
    );
  }
  if (req.url === "/admin/channels/mattermost/commands?account=ops") {
    return res.end(
      JSON.stringify({
        accountId: "ops",
        commands: [
          {
            teamId: "team1",
            trigger: "oc_status",
            commandId: "c1",
            callbackUrl: "https://gw.example/cb",
            registeredAt: 1_800_000_000_000,
          },
        ],
      }),
    );
  }
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
      { cwd: projectRoot, env: { ...process.env, EDGECLAW_DATA_DIR: join(tempProject(), "data") } },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("edgeclaw channels mattermost", () => {
  it("register-commands asks the gateway to register (account, callback URL) and shows what happened per team", async () => {
    const run = await edgeclaw([
      "channels",
      "mattermost",
      "register-commands",
      "--account",
      "ops",
      "--callback-url",
      "https://gw.example/api/channels/mattermost/command",
    ]);
    assert.equal(run.status, 0, run.stderr);
    const sent = seen.find((s) => s.method === "POST")!;
    assert.equal(sent.path, "/admin/channels/mattermost/commands");
    assert.equal(sent.auth, "Bearer tok");
    assert.deepEqual(sent.body, {
      accountId: "ops",
      callbackUrl: "https://gw.example/api/channels/mattermost/command",
    });
    assert.match(run.stdout, /\/oc_status\s+created/);
    assert.match(run.stdout, /1 left alone: another integration owns that trigger/);
  });

  it("commands lists the registrations", async () => {
    const run = await edgeclaw(["channels", "mattermost", "commands", "--account", "ops"]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /team1\s+\/oc_status\s+https:\/\/gw\.example\/cb/);
  });
});
