import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { projectRoot, tempProject } from "./helpers.ts";

/**
 * `edgeclaw channels whatsapp link` against a stand-in for GET /admin/companion/status that reports
 * the connector's link as the companion does: a QR code (module rows) drawn in the terminal, then
 * the account linked (exit 0); a logged-out account exits 1 and says how to link again. (The
 * report itself reaching /admin/companion/status: test/channels/whatsapp/link-status.test.ts.)
 */
const QR = ["1111111", "1000001", "1011101", "1000001", "1111111"];
let script: Array<Record<string, unknown>> = [];
let asked = 0;
const server = createServer((req, res) => {
  res.setHeader("content-type", "application/json");
  if (req.url !== "/admin/companion/status" || req.headers.authorization !== "Bearer tok") {
    res.statusCode = 404;
    return res.end(JSON.stringify({ error: { message: "nope" } }));
  }
  const link = script[Math.min(asked++, script.length - 1)];
  res.end(
    JSON.stringify({
      companion: {
        deployment: "k1",
        connectors: [{ channel: "whatsapp", accountId: "work", state: "connecting", link }],
      },
    }),
  );
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

describe("edgeclaw channels whatsapp link", () => {
  it("draws the reported QR code in half blocks and follows the link until it is linked", {
    timeout: 60_000,
  }, async () => {
    asked = 0;
    script = [
      { state: "awaiting-qr", qrModules: QR, expiresAt: Date.now() + 20_000 },
      { state: "linked", me: "15550001111:7@s.whatsapp.net" },
    ];
    const run = await edgeclaw(["channels", "whatsapp", "link", "--account", "work"]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /WhatsApp \(account work\): awaiting-qr/);
    // Rows 0-1 of the modules: light (0) modules are blocks, so "1111111" over "1000001" → " ▄▄▄▄▄ ".
    assert.ok(run.stdout.includes(" ▄▄▄▄▄ "), run.stdout);
    assert.match(run.stdout, /linked as 15550001111:7@s\.whatsapp\.net/);
  });

  it("a pairing code is shown as XXXX-XXXX; a logged-out account exits 1 with how to link again", async () => {
    asked = 0;
    script = [{ state: "awaiting-pairing-code", pairingCode: "ABCD1234" }];
    const code = await edgeclaw([
      "channels",
      "whatsapp",
      "link",
      "--account",
      "work",
      "--wait",
      "0",
    ]);
    assert.equal(code.status, 0, code.stderr);
    assert.match(code.stdout, /enter: ABCD-1234/);
    asked = 0;
    script = [
      { state: "logged-out", reason: "logged out from the phone (401): link the device again" },
    ];
    const out = await edgeclaw(["channels", "whatsapp", "link", "--account", "work"]);
    assert.equal(out.status, 1);
    assert.match(out.stdout, /Restart the companion to show a new QR code/);
  });
});
