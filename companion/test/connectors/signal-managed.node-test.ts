import assert from "node:assert/strict";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { signalConnector } from "../../../functions/channels/signal/companion/connector.ts";
import { FAKE_SIGNAL_BOT } from "../../../functions/channels/signal/simulate/signal-world.ts";
import { tempDir } from "../helpers.ts";
import { MemoryContext, until } from "./memory-context.ts";

/**
 * transport.kind "managed-native": the connector starts signal-cli's daemon itself (here a stand-in
 * executable serving the fake daemon, companion/test/fixtures/fake-signal-cli.ts), with
 * `--receive-mode manual` on the configured loopback port, waits for /api/v1/check, starts it
 * again after it dies, and stops it with the connector.
 */
const fixture = fileURLToPath(new URL("../fixtures/fake-signal-cli.ts", import.meta.url));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("Signal connector with a managed daemon", () => {
  it("starts signal-cli daemon --http --receive-mode manual, receives through it, restarts it after it dies and stops it at the end", {
    timeout: 90_000,
  }, async () => {
    const dir = tempDir();
    const log = join(dir, "signal-cli.log");
    const cli = join(dir, "signal-cli");
    writeFileSync(cli, `#!/bin/sh\nexec "${process.execPath}" --import tsx "${fixture}" "$@"\n`);
    chmodSync(cli, 0o755);
    process.env.FAKE_SIGNAL_CLI_LOG = log;
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const ctx = new MemoryContext({
      channel: "signal",
      accountId: "default",
      label: "Signal",
      settings: {
        number: FAKE_SIGNAL_BOT.number,
        url,
        managed: {
          cliPath: cli,
          configPath: join(dir, "signal-data"),
          httpHost: "127.0.0.1",
          httpPort: port,
          startupTimeoutMs: 30_000,
          ignoreStories: true,
        },
      },
      secretEnv: {},
    });
    const connector = signalConnector(ctx.account, {
      pollSeconds: 0.2,
      backoff: { initialMs: 100, maxMs: 200, stableMs: 60_000 },
    });
    await connector.start(ctx);
    await until(() => ctx.state_ === "ready" || undefined, 30_000, "ready");
    const started = () => readFileSync(log, "utf8").trim().split("\n");
    const [pid, ...args] = started()[0]!.split(" ");
    assert.deepEqual(args, [
      "--config",
      join(dir, "signal-data"),
      "daemon",
      "--http",
      `127.0.0.1:${port}`,
      "--receive-mode",
      "manual",
      "--no-receive-stdout",
      "--ignore-stories",
    ]);
    const say = (text: string) =>
      fetch(`${url}/_control/message`, {
        method: "POST",
        body: JSON.stringify({ from: "+15550003333", text }),
      });
    await say("through the managed daemon");
    await until(() => ctx.stored.length >= 1 || undefined, 10_000, "forwarded");

    process.kill(Number(pid), "SIGKILL");
    await until(() => (started().length >= 2 ? true : undefined), 30_000, "daemon started again");
    await until(() => ctx.state_ === "ready" || undefined, 30_000, "ready again");
    await say("after the daemon came back");
    await until(() => ctx.stored.length >= 2 || undefined, 10_000, "forwarded after restart");
    assert.ok(
      ctx.statuses.some((s) => s.state === "backoff"),
      "the dead daemon showed as backoff",
    );

    await connector.stop("shutdown");
    const second = Number(started()[1]!.split(" ")[0]);
    await until(() => (!alive(second) ? true : undefined), 10_000, "daemon stopped");
  });
});
