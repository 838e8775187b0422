import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { projectRoot, tempProject } from "./helpers.ts";

/**
 * `edgeclaw budgets …` against a stand-in gateway on loopback that answers /admin/budgets as the
 * Worker does (the Worker's side is tested in workerd: test/admin/budgets.test.ts). Checks what the
 * CLI sends (method, path, token, body) and what it prints.
 */
const window = {
  period: "day",
  key: "day:2026-11-30",
  resetsAt: Date.UTC(2026, 11, 1),
  limitUsd: 25,
  spentUsd: 1.5,
  spentTokens: 1200,
  reservedUsd: 0,
  reservedTokens: 0,
  raised: true,
};
const seen: Array<{ method: string; url: string; auth: string | undefined; body: string }> = [];
const server = createServer(async (req: IncomingMessage, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
  res.setHeader("content-type", "application/json");
  if (req.url === "/admin/budgets")
    return res.end(
      JSON.stringify({ timeZone: "UTC", scopes: [{ scope: "global", windows: [window] }] }),
    );
  if (req.url?.endsWith("/raise") || req.url?.endsWith("/reset"))
    return res.end(JSON.stringify({ ok: true, scope: "session:agent:main:x", window }));
  res.statusCode = 404;
  res.end(JSON.stringify({ error: { message: "no such scope" } }));
});
let url = "";

function edgeclaw(
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [join(projectRoot, "bin", "edgeclaw.mjs"), ...args, "--url", url, "--token", "tok-123"],
      {
        cwd: projectRoot,
        env: { ...process.env, EDGECLAW_DATA_DIR: join(tempProject(), "data") },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("edgeclaw budgets", () => {
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it("lists scopes as a table, with the gateway token", async () => {
    const run = await edgeclaw(["budgets", "list"]);
    assert.equal(run.status, 0, run.stderr);
    // Cents, not four decimals; one column each for spend and cap; the reset in the budgets' zone.
    assert.match(
      run.stdout,
      /^SCOPE\s+PERIOD\s+SPENT\s+CAP\s+TOKENS\s+IN FLIGHT\s+SANDBOX\s+RAISED\s+RESETS$/m,
    );
    assert.match(
      run.stdout,
      /^global\s+day 2026-11-30\s+\$1\.50\s+\$25\.00\s+1200\s+yes\s+2026-12-01 00:00$/m,
    );
    assert.match(run.stdout, /\(times in UTC, budgets\.timeZone\)/);
    assert.equal(seen.at(-1)?.auth, "Bearer tok-123");
  });

  it("raise and reset POST the period and amount to the scope (URL-encoded)", async () => {
    const raised = await edgeclaw([
      "budgets",
      "raise",
      "session:agent:main:x",
      "day",
      "--usd",
      "25",
    ]);
    assert.equal(raised.status, 0, raised.stderr);
    assert.match(raised.stdout, /Raised session:agent:main:x day:2026-11-30: cap \$25\.00 until/);
    assert.deepEqual(
      { method: seen.at(-1)?.method, url: seen.at(-1)?.url, body: JSON.parse(seen.at(-1)!.body) },
      {
        method: "POST",
        url: "/admin/budgets/session%3Aagent%3Amain%3Ax/raise",
        body: { period: "day", usd: 25 },
      },
    );
    const reset = await edgeclaw(["budgets", "reset", "global", "month"]);
    assert.equal(reset.status, 0, reset.stderr);
    assert.deepEqual(JSON.parse(seen.at(-1)!.body), { period: "month" });
  });

  it("an unknown id reads as every unknown id does: not found, exit 1", async () => {
    const run = await edgeclaw(["budgets", "show", "agent:nobody"]);
    assert.equal(run.status, 1);
    assert.equal(run.stderr.trim(), "edgeclaw: not found: no such scope");
  });

  it("refuses a bad period or amount before calling the gateway", async () => {
    const before = seen.length;
    const badPeriod = await edgeclaw(["budgets", "reset", "global", "week"]);
    assert.equal(badPeriod.status, 2, "a usage error");
    assert.match(badPeriod.stderr, /period must be day or month/);
    const badAmount = await edgeclaw(["budgets", "raise", "global", "day", "--usd", "0"]);
    assert.equal(badAmount.status, 2, "a usage error");
    assert.match(badAmount.stderr, /--usd must be a positive amount in USD, got "0"/);
    const negative = await edgeclaw(["budgets", "raise", "global", "day", "--tokens", "-5"]);
    assert.equal(negative.status, 2);
    assert.match(negative.stderr, /--tokens must be a positive whole number of tokens, got "-5"/);
    assert.equal(seen.length, before);
  });
});
