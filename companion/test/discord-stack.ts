import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  startFakeDiscordApi,
  type FakeDiscordApi,
} from "../../functions/channels/discord/simulate/discord-api.ts";
import { startDevInstance, type DevInstance } from "../../scripts/bench/lib/dev-instance.ts";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { FakeDiscordGateway } from "../../functions/channels/discord/simulate/discord-gateway.ts";

/**
 * The whole Discord path on one machine, for the end-to-end test and the benchmark: the fake
 * Discord REST API (replies, `GET /gateway/bot`) and the fake Gateway, a real `npm run dev` Worker
 * (workerd, Durable Objects, PGlite, the demo model) with `channels.discord` pointed at the fakes,
 * and the companion as its own Node process (`companion/src/main.ts`), which can be killed and
 * started again on the same data directory.
 */

export const STACK_TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GfakeT.e2e-discord-token";
const KEY = { id: "dc", secret: "e2e-discord-companion-secret-not-for-production" };

export interface DiscordStack {
  rest: FakeDiscordApi;
  gateway: FakeDiscordGateway;
  worker: DevInstance;
  companion: CompanionProcess;
  key: typeof KEY;
  /** A new companion process on the same data directory (after kill() or stop()). */
  restartCompanion(): Promise<CompanionProcess>;
  stop(): Promise<void>;
}

export interface CompanionProcess {
  child: ChildProcess;
  output(): string;
  /** SIGKILL: no drain, no lease release, nothing flushed. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** The fake Discord REST API with `GET /gateway/bot` pointing at the fake Gateway. */
export async function startDiscordFakes(): Promise<{
  rest: FakeDiscordApi;
  gateway: FakeDiscordGateway;
}> {
  const rest = await startFakeDiscordApi();
  const gateway = await new FakeDiscordGateway(STACK_TOKEN).listen();
  await fetch(`${rest.url}/_control/gateway`, {
    method: "POST",
    body: JSON.stringify({ url: `ws://127.0.0.1:${gateway.port}/gw` }),
  });
  return { rest, gateway };
}

export async function startDiscordStack(options: {
  allowFrom: string[];
  guildChannels?: Record<string, unknown>;
}): Promise<DiscordStack> {
  const { rest, gateway } = await startDiscordFakes();
  const worker = await startDevInstance(
    {
      session: { dmScope: "per-channel-peer" },
      companion: {
        ingressKeys: [
          {
            id: KEY.id,
            secret: { source: "env", id: "EDGECLAW_COMPANION_INGRESS_SECRET" },
            channels: ["discord"],
          },
        ],
      },
      channels: {
        discord: {
          enabled: true,
          // A SecretRef, so `npm run dev` hands DISCORD_BOT_TOKEN from the shell to the Worker.
          token: { source: "env", id: "DISCORD_BOT_TOKEN" },
          apiBaseUrl: `${rest.url}/api/v10`,
          dmPolicy: "allowlist",
          allowFrom: options.allowFrom,
          ...(options.guildChannels
            ? { guilds: { "1300000000000000001": { channels: options.guildChannels } } }
            : {}),
        },
      },
    },
    // This stack runs the companion itself (to kill and restart it), so dev must not start one.
    {
      EDGECLAW_FAKE_MODEL: "1",
      DISCORD_BOT_TOKEN: STACK_TOKEN,
      EDGECLAW_COMPANION_INGRESS_SECRET: KEY.secret,
      EDGECLAW_DEV_COMPANION: "0",
    },
  );
  const dataDir = mkdtempSync(join(tmpdir(), "edgeclaw-discord-companion-"));
  const companionPort = await freePort();
  const start = () =>
    startCompanion(worker.url, dataDir, companionPort, { key: KEY, instanceId: "discord-e2e" });
  const stack: DiscordStack = {
    rest,
    gateway,
    worker,
    companion: await start(),
    key: KEY,
    async restartCompanion() {
      stack.companion = await start();
      return stack.companion;
    },
    async stop() {
      await stack.companion.stop();
      await worker.stop();
      await gateway.close();
      await rest.stop();
    },
  };
  return stack;
}

/** The companion as its own process (`companion/src/main.ts`) on one ingress key. */
export async function startCompanion(
  workerUrl: string,
  dataDir: string,
  port: number,
  options: { key: { id: string; secret: string }; instanceId: string },
): Promise<CompanionProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "companion/src/main.ts"], {
    env: {
      ...process.env,
      EDGECLAW_WORKER_URL: workerUrl,
      EDGECLAW_COMPANION_KEY_ID: options.key.id,
      EDGECLAW_COMPANION_INGRESS_SECRET: options.key.secret,
      EDGECLAW_COMPANION_DATA_DIR: dataDir,
      EDGECLAW_COMPANION_PORT: String(port),
      // The same instance after a restart, as a container restarted in place (its lease is its own).
      EDGECLAW_COMPANION_INSTANCE_ID: options.instanceId,
      DISCORD_BOT_TOKEN: STACK_TOKEN,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    output: () => output,
    async kill() {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The bot's messages in a channel of the fake REST API. */
export async function channelMessages(
  stack: { rest: FakeDiscordApi },
  channelId: string,
): Promise<Array<{ content: string; deleted?: boolean }>> {
  return (await (
    await fetch(`${stack.rest.url}/_control/messages?channel_id=${channelId}`)
  ).json()) as Array<{ content: string; deleted?: boolean }>;
}

export async function waitUntil<T>(
  probe: () => Promise<T | undefined | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
