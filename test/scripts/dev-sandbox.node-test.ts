import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { startFakeModelServer } from "../fakes/model-server.ts";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { killStartedDevs, startDev, stopDev, tryKill, type RunningDev } from "./dev-process.ts";
import { chromium } from "playwright-core";
import { projectRoot, tempProject } from "./helpers.ts";

/**
 * `npm run dev` with an agent whose sandbox backend is "companion" and no socket account: dev
 * starts the companion for the sandbox alone (sandbox only: no lease, no connector), signs
 * `POST /v1/sandbox` with a generated outbound key, and a scripted model's `exec` runs in
 * bubblewrap. Then the whole stack is SIGKILLed while a command runs; after a restart on the same
 * data dir the resumed run is told the command was lost, and the command ran exactly once (its
 * counter file in the sandbox workspace, which outlives the processes, has one line).
 */
const TOKEN = "dev-sandbox-test-token";
let model: Awaited<ReturnType<typeof startFakeModelServer>>;
let project: string;
let env: Record<string, string>;

before(async () => {
  model = await startFakeModelServer();
  project = tempProject({
    "edgeclaw.json5": JSON.stringify({
      agents: {
        defaults: { model: "local/echo", sandbox: { backend: "companion", mode: "all" } },
      },
      models: {
        providers: {
          local: {
            baseUrl: `${model.url}/v1`,
            api: "openai-completions",
            apiKey: { source: "env", id: "LOCAL_MODEL_KEY" },
            models: [{ id: "echo" }],
          },
        },
      },
    }),
  });
  env = {
    EDGECLAW_CONFIG: join(project, "edgeclaw.json5"),
    EDGECLAW_FAKE_MODEL: "",
    LOCAL_MODEL_KEY: "sk-local-test",
    ANTHROPIC_API_KEY: "",
    OPENAI_API_KEY: "",
    EDGECLAW_GATEWAY_TOKEN: TOKEN,
    OPENCLAW_GATEWAY_TOKEN: "",
    EDGECLAW_COMPANION_OUTBOUND_SECRET: "",
    WRANGLER_SEND_METRICS: "false",
  };
});

after(async () => {
  killStartedDevs();
  await model?.stop();
});

async function script(scenario: string, steps: unknown[]): Promise<void> {
  const response = await fetch(`${model.url}/_control/script`, {
    method: "POST",
    body: JSON.stringify({ scenario, steps }),
  });
  assert.equal(response.status, 200, await response.text());
}

async function requests(scenario: string): Promise<Array<{ body: { messages: unknown[] } }>> {
  const response = await fetch(`${model.url}/_control/requests?scenario=${scenario}`);
  return ((await response.json()) as { requests: Array<{ body: { messages: unknown[] } }> })
    .requests;
}

/** The content of the tool result for `callId` in the last model request that has it. */
function toolResult(log: Array<{ body: { messages: unknown[] } }>, callId: string): string {
  for (const request of [...log].reverse()) {
    const message = (
      request.body.messages as Array<{ tool_call_id?: string; content?: string }>
    ).find((m) => m.tool_call_id === callId);
    if (message) return message.content ?? "";
  }
  return "";
}

function chat(dev: RunningDev, user: string, text: string): Promise<Response> {
  return fetch(`${dev.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "openclaw/default",
      user,
      messages: [{ role: "user", content: text }],
    }),
  });
}

async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  ms = 90_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Every file named `name` under the companion's sandbox workspaces (data dir/companion/sandbox/<scope>/workspace). */
function sandboxFiles(dataDir: string, name: string): string[] {
  const root = join(dataDir, "companion", "sandbox");
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .map((scope) => join(root, scope, "workspace", name))
    .filter((path) => existsSync(path));
}

function processAlive(pid: number): boolean {
  try {
    const stat = execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" });
    return !stat.trim().startsWith("Z");
  } catch {
    return false;
  }
}

describe("npm run dev with the companion as the exec sandbox", () => {
  it("starts the companion for the sandbox alone, and exec runs in bubblewrap", async () => {
    const dataDir = join(project, "data-basic");
    const dev = await startDev(dataDir, await freePort("127.0.0.1"), env);
    try {
      assert.match(
        dev.output(),
        /^ {2}Companion: exec sandbox \(bubblewrap\) for main on http:\/\/127\.0\.0\.1:\d+ \(pid \d+; generated outbound key "dev-local", secret in \S+companion-outbound-secret\)$/m,
      );
      assert.doesNotMatch(dev.output(), /could not read accounts|lease/i);
      const scenario = `dev-sandbox-${Date.now()}`;
      await script(scenario, [
        {
          type: "tool_calls",
          calls: [
            { id: "call_dev_1", name: "exec", arguments: { command: "echo from-dev; id -u; pwd" } },
          ],
        },
        { type: "text", text: "Ran it." },
      ]);
      const answer = await chat(dev, "sandbox-basic", `run it [scenario:${scenario}]`);
      assert.equal(answer.status, 200, await answer.clone().text());
      assert.match(await answer.text(), /Ran it\./);
      const seen = toolResult(await requests(scenario), "call_dev_1");
      assert.match(seen, /^from-dev\n1000\n\/workspace\n/, dev.output());
      assert.match(seen, /exit code 0/);

      // Operators see it: `sessions show` and the control page list the command and its time.
      const key = "agent:main:openai-user:sandbox-basic";
      const show = () =>
        spawnSync(
          process.execPath,
          [join(projectRoot, "bin", "edgeclaw.mjs"), "sessions", "show", key],
          {
            cwd: projectRoot,
            encoding: "utf8",
            timeout: 60_000,
            env: { ...process.env, EDGECLAW_URL: dev.url, EDGECLAW_GATEWAY_TOKEN: TOKEN },
          },
        );
      const shown = await until("the session index", async () => {
        const run = show();
        return run.status === 0 && /Sandbox:/.test(run.stdout) ? run.stdout : undefined;
      });
      assert.match(
        shown,
        /^Sandbox: companion, scope agent:main, network none; 1 command finished, \d+\.\d s$/m,
      );
      assert.match(shown, /^ {2}call_dev_1 \[exit 0, \d+\.\d s\] echo from-dev; id -u; pwd$/m);

      const browser = await chromium.launch({ executablePath: "/usr/bin/chromium" });
      try {
        const page = await browser.newPage();
        await page.goto(`${dev.url}/control`);
        await page.fill("#token-input", TOKEN);
        await page.click("#login button[type=submit]");
        await page.locator("main h2", { hasText: "Sessions" }).waitFor();
        await page.goto(`${dev.url}/control#sessions/${encodeURIComponent(key)}`);
        const section = page.locator("[data-list=sandbox]");
        await section.locator("code", { hasText: "call_dev_1" }).waitFor();
        assert.match(
          (await section.locator("[data-field=sandbox-summary]").textContent()) ?? "",
          /^companion · scope agent:main · network none · 1 finished, \d+\.\d s$/,
        );
        assert.match((await section.textContent()) ?? "", /exit 0/);
      } finally {
        await browser.close();
      }

      // /usage cost meters the sandbox time.
      const usage = await chat(dev, "sandbox-basic", "/usage cost");
      assert.match(await usage.text(), /🧰 Sandbox: 1 command, \d+\.\d s/);
    } finally {
      await stopDev(dev);
    }
  });

  it("the control page approves a waiting command and it runs once; edgeclaw status shows the backend", async () => {
    // Its own project: every command asks (tools.exec.ask "always").
    const asking = tempProject({
      "edgeclaw.json5": JSON.stringify({
        ...JSON.parse(readFileSync(env.EDGECLAW_CONFIG!, "utf8")),
        tools: { exec: { ask: "always" } },
      }),
    });
    const askEnv = { ...env, EDGECLAW_CONFIG: join(asking, "edgeclaw.json5") };
    const dataDir = join(asking, "data-approve");
    const dev = await startDev(dataDir, await freePort("127.0.0.1"), askEnv);
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [join(projectRoot, "bin", "edgeclaw.mjs"), ...args], {
        cwd: projectRoot,
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env, EDGECLAW_URL: dev.url, EDGECLAW_GATEWAY_TOKEN: TOKEN },
      });
    try {
      const scenario = `dev-sandbox-approve-${Date.now()}`;
      await script(scenario, [
        {
          type: "tool_calls",
          calls: [
            {
              id: "call_ask_1",
              name: "exec",
              arguments: { command: "echo approved >> approved.txt; echo ran-once" },
            },
          ],
        },
        { type: "text", text: "Waiting for the operator." },
      ]);
      const answer = await chat(dev, "sandbox-approve", `run it [scenario:${scenario}]`);
      assert.match(await answer.text(), /Waiting for the operator\./);
      assert.match(toolResult(await requests(scenario), "call_ask_1"), /approval/i);
      assert.equal(sandboxFiles(dataDir, "approved.txt").length, 0, "nothing runs before approval");

      // edgeclaw status: the companion answers, bubblewrap works, the command waits.
      const status = cli("status");
      assert.equal(status.status, 0, status.stderr);
      assert.match(status.stdout, /^ {2}agent main: companion · mode all · scope agent:main/m);
      assert.match(status.stdout, /^Companion \(http:\/\/127\.0\.0\.1:\d+\): reachable$/m);
      assert.match(status.stdout, /^ {2}bubblewrap: works · pty available$/m);
      assert.match(
        status.stdout,
        /^ {2}agent:main:openai-user:sandbox-approve · call_ask_1: echo approved/m,
      );

      const browser = await chromium.launch({ executablePath: "/usr/bin/chromium" });
      try {
        const page = await browser.newPage();
        await page.goto(`${dev.url}/control`);
        await page.fill("#token-input", TOKEN);
        await page.click("#login button[type=submit]");
        await page.locator("main h2", { hasText: "Sessions" }).waitFor();
        await page.goto(`${dev.url}/control#sandbox`);
        assert.equal(await page.locator("[data-field=companion-reachable]").textContent(), "yes");
        const pending = page.locator("[data-list=pending-approvals]");
        await pending.locator("code", { hasText: "call_ask_1" }).waitFor();
        await pending.locator("button[data-action=approve-once]").click();
        await page.locator("#toast", { hasText: "Approved" }).waitFor();
        await page
          .locator("[data-list=pending-approvals]", { hasText: "No command waits" })
          .waitFor();
      } finally {
        await browser.close();
      }

      // It ran, once: its file is in the sandbox workspace with one line.
      const files = await until("the approved command to run", async () => {
        const found = sandboxFiles(dataDir, "approved.txt");
        return found.length ? found : undefined;
      });
      // Deciding again finds nothing waiting and starts nothing.
      const again = await fetch(`${dev.url}/admin/exec-approvals/pending/decide`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({
          sessionKey: "agent:main:openai-user:sandbox-approve",
          id: "call_ask_1",
          decision: "allow-once",
        }),
      });
      assert.equal(again.status, 404);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(readFileSync(files[0]!, "utf8"), "approved\n", "the command ran exactly once");
      // The decision is audited with the operator's address.
      const audit = (await (
        await fetch(`${dev.url}/admin/audit?action=exec.approval`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        })
      ).json()) as { entries: Array<{ actor: string | null; detail: Record<string, unknown> }> };
      assert.equal(audit.entries.length, 1);
      assert.equal(audit.entries[0]!.detail.decision, "allow-once");
      assert.match(audit.entries[0]!.actor ?? "", /^operator:/);
    } finally {
      await stopDev(dev);
    }
  });

  it("SIGKILL of the whole stack mid-command: after a restart the command is reported lost, and it ran once", async () => {
    const dataDir = join(project, "data-kill");
    const first = await startDev(dataDir, await freePort("127.0.0.1"), env);
    const companionPid = Number(/Companion: .* \(pid (\d+);/.exec(first.output())?.[1]);
    assert.ok(companionPid > 0, first.output());
    const scenario = `dev-sandbox-kill-${Date.now()}`;
    await script(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_killed",
            name: "exec",
            arguments: {
              command: "echo ran >> counter.txt; echo started; sleep 20; echo finished",
              yieldMs: 60_000,
            },
          },
        ],
      },
      { type: "text", text: "Noted the loss." },
    ]);
    const cut = chat(first, "sandbox-kill", `run the long one [scenario:${scenario}]`).catch(
      (error: unknown) => error,
    );
    // The command is running once its counter line is on the sandbox's disk.
    await until("the command to start", async () =>
      sandboxFiles(dataDir, "counter.txt").length ? true : undefined,
    );
    tryKill(-first.child.pid!, "SIGKILL");
    await cut;
    // die-with-parent takes the companion (and bubblewrap with the command) down too.
    await until("the companion to die", async () =>
      processAlive(companionPid) ? undefined : true,
    );

    const second = await startDev(dataDir, await freePort("127.0.0.1"), env);
    try {
      // The run resumes by itself (its alarm), asks again, and is told the command was lost.
      const resumed = await until("the resumed run's model call", async () => {
        const log = await requests(scenario);
        return log.length >= 2 ? toolResult(log, "call_killed") : undefined;
      });
      assert.match(resumed, /^Error: started\n/);
      assert.match(resumed, /NOT run again \(id call_killed\)/);
      assert.doesNotMatch(resumed, /^finished$/m);
      const counters = sandboxFiles(dataDir, "counter.txt");
      assert.equal(counters.length, 1);
      assert.equal(readFileSync(counters[0]!, "utf8"), "ran\n", "the command ran exactly once");
      assert.equal((await requests(scenario)).length, 2, "one model call per turn, no replay");
    } finally {
      await stopDev(second);
    }
  });
});
