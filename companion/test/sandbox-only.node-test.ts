import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { signRequest } from "../../functions/channels/companion/signature.ts";
import { settingsFromEnv } from "../src/settings.ts";
import { OUTBOUND, tempDir } from "./helpers.ts";

/**
 * EDGECLAW_COMPANION_SANDBOX_ONLY=1 (what `npm run dev` runs for an agent's sandbox when no socket
 * account is configured): the real companion process serves the signed `POST /v1/sandbox` and makes
 * no call to the Worker — no lease, no account list, no status — and needs no ingress secret.
 */
const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill("SIGKILL");
});

describe("the companion for the exec sandbox alone", () => {
  it("needs an ingress secret unless it is sandbox only", () => {
    const base = { EDGECLAW_WORKER_URL: "http://127.0.0.1:9" };
    assert.throws(() => settingsFromEnv(base), /EDGECLAW_COMPANION_INGRESS_SECRET: required/);
    assert.equal(
      settingsFromEnv({ ...base, EDGECLAW_COMPANION_SANDBOX_ONLY: "1" })
        .EDGECLAW_COMPANION_SANDBOX_ONLY,
      true,
    );
  });

  it("serves signed sandbox requests and never calls the Worker", { timeout: 30_000 }, async () => {
    let workerCalls = 0;
    const worker = createServer((_req, res) => {
      workerCalls++;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => worker.listen(0, "127.0.0.1", resolve));
    const child = spawn(process.execPath, ["--import", "tsx", main], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        EDGECLAW_WORKER_URL: `http://127.0.0.1:${(worker.address() as AddressInfo).port}`,
        EDGECLAW_COMPANION_SANDBOX_ONLY: "1",
        EDGECLAW_COMPANION_OUTBOUND_SECRET: OUTBOUND.secret,
        EDGECLAW_COMPANION_OUTBOUND_KEY_ID: OUTBOUND.id,
        EDGECLAW_COMPANION_PORT: "0",
        EDGECLAW_COMPANION_DATA_DIR: tempDir(),
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(child);
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const match = /"companion listening","port":(\d+)/.exec(out);
        if (match) resolve(Number(match[1]));
      });
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    const body = JSON.stringify({
      op: "start",
      scope: "agent:main",
      execId: "sandbox-only-1",
      command: "echo only-the-sandbox",
      timeoutSeconds: 10,
      waitMs: 5000,
      isolation: "none",
      maxOutputChars: 1000,
      pendingMaxOutputChars: 1000,
      syncMaxFiles: 10,
      syncMaxBytes: 10_000,
    });
    const post = async (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${port}/v1/sandbox`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body,
      });
    assert.equal((await post({})).status, 401, "unsigned requests are refused");
    const signed = await signRequest(OUTBOUND, {
      method: "POST",
      path: "/v1/sandbox",
      body: new TextEncoder().encode(body),
      timestamp: Math.floor(Date.now() / 1000),
    });
    const answer = await post(signed);
    assert.equal(answer.status, 200);
    assert.equal(((await answer.json()) as { output: string }).output, "only-the-sandbox\n");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(workerCalls, 0, "no lease, no accounts, no status");
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
    worker.close();
  });
});
