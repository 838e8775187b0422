/**
 * `npm run dev`: the whole gateway on this machine — embedded Postgres (PGlite behind the Neon
 * driver's WebSocket bridge), the Worker with the config and workspace bundled in as a deploy
 * would, and the browser Worker over local Chromium (lib/dev-browser.ts). State lives under
 * EDGECLAW_DATA_DIR (default .edgeclaw/data); EDGECLAW_PORT (default 8787) picks the port. A socket
 * account (Discord, Slack Socket Mode, Telegram polling, Mattermost) gets the companion as a plain
 * Node process (lib/dev-companion.ts) on EDGECLAW_COMPANION_PORT (default: a free port);
 * EDGECLAW_DEV_COMPANION=0 leaves it to you (your own companion, on the key the banner names).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, renameSync, rmSync } from "node:fs";
import type { Socket } from "node:net";
import { join, resolve } from "node:path";
import { loadBundleInputs, type BundleInputs } from "./lib/bundle-inputs.ts";
import { reportConfigError } from "./lib/config-file.ts";
import {
  DataDirHeldError,
  DataDirLockedError,
  lockDataDir,
  type DataDirLock,
} from "./lib/data-dir-lock.ts";
import { devReadyBanner } from "./lib/dev-banner.ts";
import { startDevBrowser, type DevBrowser } from "./lib/dev-browser.ts";
import {
  buildCompanionBundle,
  companionBundleStale,
  startAnsweringCompanion,
  type RunningCompanion,
} from "./lib/dev-companion.ts";
import { planDevCompanion, type DevCompanionPlan } from "./lib/dev-companion-plan.ts";
import { withCompanionUrl } from "./lib/dev-companion-sandbox.ts";
import { configuredVarNames, readDevVarsFile, shellVars, writeEnvFile } from "./lib/dev-vars.ts";
import { gatewayAuthForDev } from "./lib/gateway-token.ts";
import { freePort, isPortFree } from "./lib/local-ports.ts";
import type { LocalPostgres } from "./lib/local-postgres.ts";
import { bundleDefineArgs, localWorkerCli, wranglerEnv } from "./lib/wrangler.ts";
import type { SimulatedDev } from "./simulate/dev.ts";

const HOST = "127.0.0.1";
/** What the Worker is handed of the local database (set once Postgres answers). */
const DATABASE_VARS = ["DATABASE_URL", "EDGECLAW_PG_WS_PROXY"];
/** After this long without /health answering, say what to look at (and keep waiting). */
const SLOW_START_HINT_MS = 60_000;
const STOP_GRACE_MS = 8_000;
/** How long dev waits for the companion it started to answer before printing the ready line. */
const COMPANION_LISTEN_MS = 15_000;
const dieWithParentUrl = new URL("./lib/die-with-parent.mjs", import.meta.url).href;

const port = Number.parseInt(process.env.EDGECLAW_PORT ?? "8787", 10);
const dataDir = resolve(process.env.EDGECLAW_DATA_DIR || ".edgeclaw/data");
/** EDGECLAW_DEV_COMPANION=0: socket accounts are served by a companion you run yourself. */
const runCompanion = process.env.EDGECLAW_DEV_COMPANION !== "0";

let postgres: LocalPostgres | undefined;
let wrangler: ChildProcess | undefined;
let companion: RunningCompanion | undefined;
let browser: DevBrowser | undefined;
let lock: DataDirLock | undefined;
/** EDGECLAW_SIMULATE=1: fake platforms for the configured channels (scripts/simulate/). */
let simulated: SimulatedDev | undefined;
const unlock = () => lock?.release();
let stopping: Promise<void> | undefined;
/** The merged secrets file handed to wrangler; removed on stop so keys do not linger on disk. */
const envFile = join(dataDir, "dev-secrets.env");

function fail(message: string): never {
  console.error(`edgeclaw dev: ${message}`);
  process.exit(1);
}

async function main() {
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    fail(`EDGECLAW_PORT must be a port number, got ${process.env.EDGECLAW_PORT}`);

  // A bad config fails before anything starts.
  let inputs: BundleInputs;
  try {
    inputs = loadBundleInputs();
  } catch (error) {
    process.exit(reportConfigError(error));
  }
  for (const warning of inputs.warnings) console.warn(`warning: ${warning}`);

  mkdirSync(dataDir, { recursive: true });
  try {
    lock = lockDataDir(dataDir);
  } catch (error) {
    if (error instanceof DataDirLockedError || error instanceof DataDirHeldError)
      fail(error.message);
    throw error;
  }
  if (!(await isPortFree(port, HOST))) {
    unlock();
    fail(`port ${port} on ${HOST} is already in use; set EDGECLAW_PORT to another port`);
  }

  const vars: Record<string, string> = {
    ...readDevVarsFile(resolve(".dev.vars")),
    ...shellVars(process.env, configuredVarNames(inputs.loaded.raw, inputs.loaded.config)),
  };
  const auth = gatewayAuthForDev(inputs.loaded.config, vars, dataDir);
  if (auth.kind === "generated") vars.EDGECLAW_GATEWAY_TOKEN = auth.token;
  if (process.env.EDGECLAW_SIMULATE === "1")
    simulated = await (await import("./simulate/dev.ts")).simulateForDev(inputs, vars);
  const config = simulated?.config ?? inputs.loaded.config;
  let defineArgs = simulated?.defineArgs ?? inputs.defineArgs;
  browser = await startDevBrowser(config);
  // Socket accounts: the companion's key (a generated one is added to the bundled config) and the
  // platform secrets both processes need go into `vars` before the Worker's env file is written.
  const companionPlan = planDevCompanion({
    raw: simulated?.raw ?? inputs.loaded.raw,
    config,
    vars,
    shellEnv: process.env,
    dataDir,
  });
  let companionPort: number | undefined; // undefined: a free one, chosen as the companion starts
  let companionBuild: Promise<void> | undefined;
  if (companionPlan) {
    for (const warning of companionPlan.warnings) console.warn(`warning: ${warning}`);
    Object.assign(companionPlan.env, simulated?.companionEnv);
    if (runCompanion) {
      const wanted =
        process.env.EDGECLAW_COMPANION_PORT ?? loopbackPort(companionPlan.outbound?.configuredUrl);
      // Unset companion.url: the Worker sends sandbox commands and replies to the one dev starts.
      const workerNeedsUrl = companionPlan.outbound && !companionPlan.outbound.configuredUrl;
      if (wanted || workerNeedsUrl) companionPort = await companionPortFor(wanted);
      if (workerNeedsUrl)
        companionPlan.raw = withCompanionUrl(companionPlan.raw, `http://${HOST}:${companionPort}`);
      // Built while the Worker starts, in a child process: nothing of esbuild stays in this one.
      if (companionBundleStale()) companionBuild = buildCompanionBundle();
    }
    if (companionPlan.raw !== (simulated?.raw ?? inputs.loaded.raw))
      defineArgs = bundleDefineArgs(companionPlan.raw, inputs.workspace.seeds);
  }
  const url = `http://${HOST}:${port}`;
  // A file a killed run left: the local Worker starts workerd once this file exists.
  rmSync(envFile, { force: true });
  // The local database always wins over a DATABASE_URL in .dev.vars: dev never touches production.
  const envNames = [...new Set([...Object.keys(vars), ...DATABASE_VARS])];

  const args = [
    // Dies with this process however it ends (see die-with-parent.mjs), via the pipe on fd 3.
    "--import",
    dieWithParentUrl,
    // A small young generation: this process only supervises workerd.
    "--max-semi-space-size=1",
    localWorkerCli,
    "--watch",
    "--ip",
    HOST,
    "--port",
    String(port),
    "--inspector-port",
    String(await freePort(HOST)),
    "--persist-to",
    join(dataDir, "wrangler"),
    "--vars-file",
    envFile,
    ...envNames.flatMap((name) => ["--env-binding", name]),
    ...defineArgs,
    ...(browser.url ? ["--browser-run", browser.url] : []),
  ];
  // Its own process group, so stopping it reaches workerd too. The Worker builds while Postgres
  // starts here; workerd waits for the env file, written once Postgres answers.
  wrangler = spawn(process.execPath, args, {
    detached: true,
    stdio: ["ignore", "inherit", "inherit", "pipe"],
    env: wranglerEnv({
      CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: "true",
      CLOUDFLARE_INCLUDE_PROCESS_ENV: "false",
      EDGECLAW_PARENT_PIPE_FD: "3",
    }),
  });
  (wrangler.stdio[3] as Socket | null)?.unref();
  if (wrangler.pid !== undefined) lock?.publish({ wranglerPgid: wrangler.pid });
  const exited = new Promise<number>((resolveExit) =>
    wrangler!.once("exit", (code, signal) => resolveExit(code ?? (signal ? 1 : 0))),
  );
  void exited.then(async (code) => {
    if (stopping) return;
    console.error(`edgeclaw dev: wrangler exited (code ${code}); stopping`);
    await stop();
    process.exit(code || 1);
  });

  // Loaded here, not at the top: PGlite's 9 MB module loads while the Worker builds.
  const { startLocalPostgres } = await import("./lib/local-postgres.ts");
  postgres = await startLocalPostgres({ dataDir: join(dataDir, "pg") });
  if (stopping) return;
  vars.DATABASE_URL = postgres.databaseUrl;
  vars.EDGECLAW_PG_WS_PROXY = postgres.wsProxy;
  // A companion for the sandbox alone needs nothing of the Worker: up before workerd starts, so a
  // run the Worker resumes at start (after a crash) finds its sandbox host answering.
  if (companionPlan && runCompanion && !companionPlan.key)
    companion = await startDevCompanion(companionPlan, url, companionPort, companionBuild);
  if (stopping) return;
  // Whole or not at all (the local Worker reads it as soon as it exists).
  writeEnvFile(`${envFile}.writing`, vars);
  renameSync(`${envFile}.writing`, envFile);

  if (!(await waitForHealth(`${url}/health`, exited))) return;

  lock?.publish({ url, tokenFile: auth.kind === "generated" ? auth.file : undefined });
  if (companionPlan && runCompanion && companionPlan.key)
    companion = await startDevCompanion(
      companionPlan,
      // Simulating: through a pass-through that keeps the Worker's answers for `edgeclaw simulate`.
      (await simulated?.companionWorkerUrl(url)) ?? url,
      companionPort,
      companionBuild,
    );
  const companionLine = companionPlan
    ? {
        accounts: companionPlan.accounts,
        key: companionPlan.key,
        sandbox: companionPlan.sandbox,
        running: companion && { url: companion.url, pid: companion.pid },
      }
    : undefined;
  for (const line of devReadyBanner({
    url,
    summary: inputs.summary,
    dataDir,
    config,
    vars,
    auth,
    companion: companionLine,
    browser: browser.line,
  }))
    console.log(line);
  for (const line of simulated?.ready(url, dataDir) ?? []) console.log(line);
}

/** The port of a loopback companion.url (dev must start the companion there), else undefined. */
function loopbackPort(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const parsed = new URL(url);
  if (!["127.0.0.1", "localhost", "[::1]"].includes(parsed.hostname) || !parsed.port)
    return undefined;
  return parsed.port;
}

/** EDGECLAW_COMPANION_PORT when set (it must be free), else any free port. */
async function companionPortFor(wanted: string | undefined): Promise<number> {
  if (!wanted) return freePort(HOST);
  const chosen = Number.parseInt(wanted, 10);
  if (!Number.isInteger(chosen) || chosen < 1 || chosen > 65535)
    fail(`EDGECLAW_COMPANION_PORT must be a port number, got ${wanted}`);
  if (!(await isPortFree(chosen, HOST)))
    fail(
      `EDGECLAW_COMPANION_PORT ${chosen} on ${HOST} is already in use; set it to another port or unset it`,
    );
  return chosen;
}

/** What the companion is for, as the messages name it. */
function companionServes(plan: DevCompanionPlan): string {
  const sandbox = plan.sandbox ? [`exec sandbox (agents ${plan.sandbox.agents.join(", ")})`] : [];
  return [...plan.accounts, ...sandbox].join(", ");
}

/** Starts the companion once the Worker answers; a failed build leaves the Worker serving, said loudly. */
async function startDevCompanion(
  plan: DevCompanionPlan,
  workerUrl: string,
  companionPort: number | undefined,
  build: Promise<void> | undefined,
): Promise<RunningCompanion | undefined> {
  try {
    await build;
  } catch (error) {
    console.error(
      `edgeclaw dev: ${error instanceof Error ? error.message : String(error)}\nedgeclaw dev: the companion is not running: ${companionServes(plan)} stay disconnected`,
    );
    return undefined;
  }
  if (stopping) return undefined;
  const { running, answered } = await startAnsweringCompanion({
    plan,
    workerUrl,
    host: HOST,
    port: companionPort,
    listenMs: COMPANION_LISTEN_MS,
    dataDir: join(dataDir, "companion"),
    onUnexpectedExit(how) {
      if (stopping) return;
      console.error(
        `edgeclaw dev: the companion exited (${how}): ${companionServes(plan)} stay disconnected until you restart npm run dev (its log is above); the Worker keeps serving`,
      );
    },
  });
  if (!answered && !stopping)
    console.warn(
      `edgeclaw dev: the companion does not answer on ${running.url}/healthz after ${COMPANION_LISTEN_MS / 1000} s (its log is above)`,
    );
  return running;
}

/**
 * Polls until /health answers; false when wrangler exited or we are stopping. A build error keeps
 * wrangler waiting for a fix (it rebuilds on save), so this waits too, with a hint now and then.
 */
async function waitForHealth(healthUrl: string, exited: Promise<number>): Promise<boolean> {
  let nextHint = Date.now() + SLOW_START_HINT_MS;
  let gone = false;
  void exited.then(() => (gone = true));
  while (!gone && !stopping) {
    if (Date.now() > nextHint) {
      console.warn(
        `edgeclaw dev: still waiting for ${healthUrl} — if wrangler reported a build error above, fix it and save`,
      );
      nextHint = Date.now() + SLOW_START_HINT_MS;
    }
    try {
      const response = await fetch(healthUrl, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.ok) return true;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 300));
  }
  return false;
}

/** Stops wrangler (and its whole process group), then Postgres, then frees the data dir. */
function stop(): Promise<void> {
  stopping ??= (async () => {
    // First, while the Worker still answers: the companion drains its outbox and releases its lease.
    await companion?.stop();
    const child = wrangler;
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((resolveGone) => child.once("exit", () => resolveGone()));
      signalGroup(child.pid, "SIGINT");
      const timer = new Promise<void>((resolveTimer) => setTimeout(resolveTimer, STOP_GRACE_MS));
      await Promise.race([gone, timer]);
    }
    // Whatever wrangler left behind in its group (workerd) goes too.
    if (child?.pid !== undefined) signalGroup(child.pid, "SIGKILL");
    await browser?.stop();
    rmSync(envFile, { force: true });
    rmSync(`${envFile}.writing`, { force: true });
    await simulated?.stop(dataDir);
    await postgres
      ?.stop()
      .catch((error: unknown) =>
        console.error(`edgeclaw dev: stopping Postgres: ${String(error)}`),
      );
    unlock();
  })();
  return stopping;
}

function signalGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** Ctrl-C reaches the terminal's group and tsx relays it again: a repeat this soon is the same keypress. */
const REPEATED_SIGNAL_MS = 1_500;
let firstSignalAt = 0;

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    if (stopping) {
      if (Date.now() - firstSignalAt < REPEATED_SIGNAL_MS) return;
      // A real second Ctrl-C: do not wait for anything.
      companion?.kill();
      if (wrangler?.pid !== undefined) signalGroup(wrangler.pid, "SIGKILL");
      void browser?.stop();
      rmSync(envFile, { force: true });
      unlock();
      process.exit(130);
    }
    firstSignalAt = Date.now();
    console.log(`\nedgeclaw dev: stopping (${signal})`);
    void stop().then(() => {
      console.log("edgeclaw dev: stopped");
      process.exit(0);
    });
  });
}
process.on("exit", () => {
  // Last resort if this process dies on an error: never leave a workerd (or a companion) behind.
  companion?.kill();
  if (wrangler?.pid !== undefined) signalGroup(wrangler.pid, "SIGKILL");
  void browser?.stop(); // its Chromiums are killed at once, before this returns
});

main().catch(async (error: unknown) => {
  console.error(
    `edgeclaw dev: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
  await stop();
  process.exit(1);
});
