import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { projectRoot } from "./helpers.ts";

/** `edgeclaw channels msteams package`: the zip it writes unpacks (with Python's zipfile) into a manifest for the configured app and two icons of the sizes Teams requires. */
const APP_ID = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";

function edgeclaw(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(projectRoot, "bin", "edgeclaw.mjs"), ...args],
      {
        cwd,
        timeout: 60_000,
        env: { ...process.env, EDGECLAW_URL: "", EDGECLAW_CONFIG: "", MSTEAMS_APP_ID: "", ...env },
      },
      (error, stdout, stderr) =>
        resolve({
          status: error ? (typeof error.code === "number" ? error.code : 1) : 0,
          stdout,
          stderr,
        }),
    );
  });
}

function pngSize(png: Buffer): [number, number] {
  assert.equal(png.subarray(1, 4).toString("ascii"), "PNG");
  return [png.readUInt32BE(16), png.readUInt32BE(20)];
}

describe("edgeclaw channels msteams package", () => {
  it("writes manifest.json + color/outline icons for the app id in edgeclaw.json5", async () => {
    const dir = mkdtempSync(join(tmpdir(), "teams-pkg-"));
    writeFileSync(
      join(dir, "edgeclaw.json5"),
      `{ channels: { msteams: { enabled: true, appId: "${APP_ID}" } } }`,
    );
    const result = await edgeclaw(["channels", "msteams", "package", "--out", "app.zip"], dir);
    assert.equal(result.status, 0, result.stderr);
    const out = join(dir, "unpacked");
    // Python's zipfile, not `unzip`: a fresh CI machine has python3 but not necessarily unzip.
    execFileSync("python3", ["-m", "zipfile", "-e", join(dir, "app.zip"), out]);
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as {
      id: string;
      bots: Array<{ botId: string; scopes: string[] }>;
      icons: { color: string; outline: string };
    };
    assert.equal(manifest.id, APP_ID);
    assert.equal(manifest.bots[0]!.botId, APP_ID);
    assert.deepEqual(manifest.bots[0]!.scopes, ["personal", "team", "groupChat"]);
    assert.deepEqual(pngSize(readFileSync(join(out, manifest.icons.color))), [192, 192]);
    assert.deepEqual(pngSize(readFileSync(join(out, manifest.icons.outline))), [32, 32]);
  });

  it("refuses without an app id, or with one that is not a GUID", async () => {
    const dir = mkdtempSync(join(tmpdir(), "teams-pkg-"));
    const none = await edgeclaw(["channels", "msteams", "package"], dir);
    assert.equal(none.status, 2, "a usage error");
    assert.match(none.stderr, /no app id/);
    const bad = await edgeclaw(["channels", "msteams", "package", "--app-id", "nope"], dir);
    assert.equal(bad.status, 2, "a usage error");
    assert.match(bad.stderr, /GUID/);
  });
});
