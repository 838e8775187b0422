import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { killStartedDevs, startDev, stopDev } from "./dev-process.ts";

/**
 * `npm run dev` with models that cannot be reached: the default agent's provider points at a
 * closed loopback port, the `ghost` agent's at a name under `.invalid` (never resolves; no test
 * touches the internet). The chat answer names the cause, the host and the key to fix; the dev
 * terminal prints short lines for those failures, none of workerd's binary stack traces or its
 * echoes of the caught fetch errors.
 */
const TOKEN = "dev-unreachable-token-0123456789";
const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  killStartedDevs();
});

async function chat(base: string, model: string, user: string): Promise<string> {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ model, user, messages: [{ role: "user", content: "hello?" }] }),
  });
  return response.text();
}

describe("npm run dev with an unreachable model", () => {
  it("answers with the cause (refused, DNS) and prints one line per failure", {
    timeout: 300_000,
  }, async () => {
    const work = mkdtempSync(join(tmpdir(), "edgeclaw-unreachable-"));
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const closedPort = await freePort();
    const configFile = join(work, "edgeclaw.json5");
    const provider = (baseUrl: string) => ({
      baseUrl,
      api: "openai-completions",
      apiKey: "sk-local-test-key",
      models: [{ id: "m1", cost: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } }],
    });
    writeFileSync(
      configFile,
      JSON.stringify({
        gateway: { auth: { token: TOKEN } },
        agents: {
          defaults: { model: { primary: "closed/m1" } },
          list: [
            { id: "main", default: true },
            { id: "ghost", model: { primary: "ghost/m1" } },
          ],
        },
        models: {
          providers: {
            closed: provider(`http://127.0.0.1:${closedPort}/v1`),
            ghost: provider("https://no-such-model-host.invalid/v1"),
          },
        },
      }),
    );
    const dev = await startDev(
      join(work, "data"),
      await freePort(),
      {
        EDGECLAW_CONFIG: configFile,
        EDGECLAW_FAKE_MODEL: "",
        ANTHROPIC_API_KEY: "",
        OPENAI_API_KEY: "",
        EDGECLAW_GATEWAY_TOKEN: "",
        EDGECLAW_DEV_COMPANION: "0",
      },
      180_000,
    );
    cleanups.push(() => stopDev(dev));
    const before = dev.output().length;

    const refused = await chat(dev.url, "openclaw/default", "unreachable-refused");
    assert.match(refused, new RegExp(`connection refused by 127\\.0\\.0\\.1:${closedPort}`));
    assert.match(refused, /models\.providers\.closed\.baseUrl/);
    const dns = await chat(dev.url, "openclaw/ghost", "unreachable-dns");
    assert.match(dns, /DNS lookup failed: the provider's host name no-such-model-host\.invalid/);
    assert.match(dns, /models\.providers\.ghost\.baseUrl/);
    assert.doesNotMatch(refused + dns, /internal error|Network connection lost/);

    await new Promise((resolve) => setTimeout(resolve, 500));
    const terminal = dev.output().slice(before);
    const lines = terminal.split("\n").filter((line) => line.trim());
    assert.doesNotMatch(terminal, /^stack: /m, "no binary stack traces");
    assert.doesNotMatch(terminal, /uncaught exception/, "no echoes of caught fetch errors");
    assert.doesNotMatch(terminal, /sk-local-test-key/);
    const dnsLines = lines.filter((line) => line.includes("no-such-model-host.invalid"));
    const refusedLines = lines.filter((line) => /refused/i.test(line));
    // Three attempts each (network errors are retried): the Worker's decision line per model, and
    // per attempt at most one condensed workerd line, never the repeated KJ dumps.
    assert.ok(dnsLines.length >= 1 && dnsLines.length <= 4, dnsLines.join("\n"));
    assert.ok(refusedLines.length >= 1 && refusedLines.length <= 4, refusedLines.join("\n"));
    assert.ok(lines.length <= 20, `too many lines for two failed chats:\n${terminal}`);
    console.log(terminal);
  });
});
