import {
  SELF,
  createExecutionContext,
  createScheduledController,
  env,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import type { Env } from "../../workers/env.ts";
import worker from "../../workers/index.ts";
import { companionStatusReport } from "../../workers/companion-status.ts";

/**
 * The companion container's keeper (durable-objects/companion-keeper.ts) through the deployment's
 * CompanionDO, on real storage and real alarms: start when wanted, restart after a stop with
 * exponential backoff, the crash-loop breaker, and stop when no longer wanted. The Containers
 * runtime itself is test/fakes/container-runtime.js (the real class needs a container engine);
 * bounds from test/setup/test-config.ts: 1 s min, 4 s max, 3 unclean stops in 60 s.
 */
const testEnv = env as unknown as Env;
const DEPLOYMENT = "tgpoll";

interface RuntimeLog {
  launches: Array<{ at: number; deployment: string; vars: Record<string, string> }>;
  halts: number;
  running: boolean;
}
interface FakeRuntime {
  record(): Promise<RuntimeLog>;
  forget(): Promise<void>;
  failNextLaunches(count: number): Promise<void>;
}

const companion = (deployment = DEPLOYMENT) => testEnv.COMPANION.getByName(deployment);
const runtime = (deployment = DEPLOYMENT) =>
  testEnv.COMPANION_CONTAINER.getByName(deployment) as unknown as FakeRuntime;

async function alarmAt(deployment = DEPLOYMENT): Promise<number | null> {
  return runInDurableObject(companion(deployment), (_instance, state) => state.storage.getAlarm());
}

async function launchesReach(
  count: number,
  deployment = DEPLOYMENT,
  timeoutMs = 8_000,
): Promise<RuntimeLog> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const log = await runtime(deployment).record();
    if (log.launches.length >= count) return log;
    if (Date.now() > until)
      throw new Error(`expected ${count} launches, saw ${log.launches.length}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeEach(async () => {
  for (const deployment of [DEPLOYMENT, "tgall", "k1", "sockmm"]) {
    await runtime(deployment).forget();
    await runInDurableObject(companion(deployment), async (_instance, state) => {
      // The CompanionDO's constructor made the tables; start each test from no keeper state.
      state.storage.sql.exec("DELETE FROM container_keeper");
      state.storage.sql.exec("DELETE FROM container_stops");
      await state.storage.deleteAlarm();
    });
  }
});

describe("companion container keeper", () => {
  it("starts the container with the Worker URL, its key and only its own accounts' secrets", async () => {
    const report = await companion().keepContainer(DEPLOYMENT, true, "r1");
    expect(report.state).toBe("running");
    const log = await runtime().record();
    expect(log.launches).toHaveLength(1);
    expect(log.launches[0]!.vars).toEqual({
      EDGECLAW_WORKER_URL: "https://edgeclaw.test",
      EDGECLAW_COMPANION_KEY_ID: "tgpoll",
      EDGECLAW_COMPANION_INGRESS_SECRET: "test-companion-tgpoll-secret",
      TEST_TELEGRAM_POLL_BOT_TOKEN: "7000000003:test-poll-token",
      // The test config has an outbound key (the sandbox host's, companion.outboundKeys): the
      // companion needs it to verify the Worker's signed /v1/outbound and /v1/sandbox calls.
      EDGECLAW_COMPANION_OUTBOUND_KEY_ID: "sbx",
      EDGECLAW_COMPANION_OUTBOUND_SECRET: "test-sandbox-outbound-secret",
    });
    // Kept again while it runs: asked to start again (a no-op for a running container), no restart planned.
    expect((await companion().keepContainer(DEPLOYMENT, true, "r1")).state).toBe("running");
    expect(await alarmAt()).toBeNull();
  });

  it("restarts after each unclean stop with a doubling delay, on its own alarm, and the third unclean stop in the window opens the breaker", async () => {
    await companion().keepContainer(DEPLOYMENT, true, "r1");
    const firstStop = Date.now();
    const pending = await companion().containerStopped(137, "runtime_signal");
    expect(pending).toMatchObject({
      state: "restart-pending",
      uncleanStopsInWindow: 1,
      lastStop: { exitCode: 137, reason: "runtime_signal" },
    });
    expect(pending.restartAt! - firstStop).toBeGreaterThanOrEqual(900);
    expect(pending.restartAt! - firstStop).toBeLessThanOrEqual(1_500);
    expect(await alarmAt()).toBe(pending.restartAt);

    // Nobody calls the keeper: the alarm alone starts it again.
    const second = await launchesReach(2);
    expect(second.launches[1]!.at).toBeGreaterThanOrEqual(pending.restartAt!);
    expect((await companion().containerReport()).state).toBe("running");

    const secondStop = Date.now();
    const doubled = await companion().containerStopped(1, "exit");
    expect(doubled).toMatchObject({ state: "restart-pending", uncleanStopsInWindow: 2 });
    expect(doubled.restartAt! - secondStop).toBeGreaterThanOrEqual(1_900);
    expect(doubled.restartAt! - secondStop).toBeLessThanOrEqual(2_500);
    await launchesReach(3);

    const broken = await companion().containerStopped(1, "exit");
    expect(broken).toMatchObject({ state: "breaker-open", uncleanStopsInWindow: 3 });
    expect(broken.restartAt).toBeUndefined();
    expect(await alarmAt()).toBeNull();
    // The cron's keep does not start it while the breaker is open.
    expect((await companion().keepContainer(DEPLOYMENT, true, "r1")).state).toBe("breaker-open");
    expect((await runtime().record()).launches).toHaveLength(3);

    // /admin/companion/status (and the control page, which shows it) says so.
    const health = await companionStatusReport({ ...testEnv, EDGECLAW_COMPANION_CONTAINER: "1" });
    const deployments = (
      health.companion as {
        deployments: Array<{
          deployment: string;
          container?: { state: string; uncleanStopsInWindow: number };
        }>;
      }
    ).deployments;
    expect(deployments.find((entry) => entry.deployment === DEPLOYMENT)?.container).toMatchObject({
      state: "breaker-open",
      uncleanStopsInWindow: 3,
    });

    // A deploy that changes the config closes it and starts again.
    expect((await companion().keepContainer(DEPLOYMENT, true, "r2")).state).toBe("running");
    expect((await runtime().record()).launches).toHaveLength(4);
  });

  it("the operator's reset closes an open breaker and starts the container again", async () => {
    await companion().keepContainer(DEPLOYMENT, true, "r1");
    for (let stop = 0; stop < 3; stop++) await companion().containerStopped(1, "exit");
    expect((await companion().containerReport()).state).toBe("breaker-open");
    const reset = await companion().resetContainer();
    expect(reset).toMatchObject({ state: "running", uncleanStopsInWindow: 0 });
    expect((await runtime().record()).launches).toHaveLength(2);
  });

  it("POST /admin/companion/container/reset (gateway token, audited) closes the breaker; strangers and unknown deployments are refused", async () => {
    await companion().keepContainer(DEPLOYMENT, true, "r1");
    for (let stop = 0; stop < 3; stop++) await companion().containerStopped(1, "exit");
    const post = (body: unknown, token?: string) =>
      SELF.fetch("https://edgeclaw.test/admin/companion/container/reset", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
      });
    expect((await post({ deployment: DEPLOYMENT })).status).toBe(401);
    expect((await post({ deployment: DEPLOYMENT }, "not-the-token")).status).toBe(401);
    expect((await companion().containerReport()).state).toBe("breaker-open");
    expect((await post({ deployment: "nobody" }, "test-gateway-token")).status).toBe(404);
    expect((await post({ deployment: "../x" }, "test-gateway-token")).status).toBe(400);

    const listed = await SELF.fetch("https://edgeclaw.test/admin/companion/container", {
      headers: { authorization: "Bearer test-gateway-token" },
    });
    const list = (await listed.json()) as {
      deployed: boolean;
      deployments: Array<{ deployment: string; container: { state: string } }>;
    };
    expect(list.deployed).toBe(false);
    expect(list.deployments.find((entry) => entry.deployment === DEPLOYMENT)?.container.state).toBe(
      "breaker-open",
    );

    const reset = await post({ deployment: DEPLOYMENT }, "test-gateway-token");
    expect(reset.status).toBe(200);
    expect(((await reset.json()) as { container: { state: string } }).container.state).toBe(
      "running",
    );
    const audit = await SELF.fetch(
      "https://edgeclaw.test/admin/audit?limit=50&action=companion.container_reset",
      { headers: { authorization: "Bearer test-gateway-token" } },
    );
    const entries = (
      (await audit.json()) as { entries: Array<{ action: string; target: string | null }> }
    ).entries;
    expect(
      entries.some(
        (entry) => entry.action === "companion.container_reset" && entry.target === DEPLOYMENT,
      ),
    ).toBe(true);
  });

  it("clean stops (exit 0: a rollout's SIGTERM) restart after the minimum delay and never open the breaker", async () => {
    await companion().keepContainer(DEPLOYMENT, true, "r1");
    for (let stop = 0; stop < 5; stop++) {
      const before = Date.now();
      const report = await companion().containerStopped(0, "exit");
      expect(report).toMatchObject({ state: "restart-pending", uncleanStopsInWindow: 0 });
      expect(report.restartAt! - before).toBeLessThanOrEqual(1_500);
    }
  });

  it("a start the platform refuses counts as an unclean stop and is retried after backoff", async () => {
    await runtime().failNextLaunches(1);
    const report = await companion().keepContainer(DEPLOYMENT, true, "r1");
    expect(report).toMatchObject({ state: "restart-pending", uncleanStopsInWindow: 1 });
    expect(report.lastError).toMatch(/^start failed: there is no Container instance available/);
    await launchesReach(2);
    expect((await companion().containerReport()).state).toBe("running");
  });

  it("no longer wanted: the container is stopped and a pending restart is cancelled", async () => {
    await companion().keepContainer(DEPLOYMENT, true, "r1");
    await companion().containerStopped(1, "exit");
    expect(await alarmAt()).not.toBeNull();
    const report = await companion().keepContainer(DEPLOYMENT, false, "r1");
    expect(report.state).toBe("not-wanted");
    expect(await alarmAt()).toBeNull();
    expect((await runtime().record()).halts).toBe(1);
    // A stop reported after that is not restarted.
    expect((await companion().containerStopped(0, "exit")).state).toBe("not-wanted");
    expect(await alarmAt()).toBeNull();
  });

  it("a deployment that serves no socket account is not started", async () => {
    const report = await companion("nobody").keepContainer("nobody", true, "r1");
    expect(report.state).toBe("waiting-for-config");
    expect(report.lastError).toMatch(
      /no socket account is served by companion deployment "nobody"/,
    );
    expect((await runtime("nobody").record()).launches).toHaveLength(0);
  });

  it("the cron keeps every deployment that serves socket accounts while the deploy added the container, and stops them once it did not", async () => {
    const controller = createScheduledController({
      scheduledTime: Date.now(),
      cron: "*/5 * * * *",
    });
    let ctx = createExecutionContext();
    worker.scheduled!(controller, testEnv, ctx);
    await waitOnExecutionContext(ctx);
    expect((await runtime().record()).launches).toHaveLength(0);

    ctx = createExecutionContext();
    worker.scheduled!(controller, { ...testEnv, EDGECLAW_COMPANION_CONTAINER: "1" }, ctx);
    await waitOnExecutionContext(ctx);
    for (const deployment of [DEPLOYMENT, "tgall", "sockmm"]) {
      expect((await companion(deployment).containerReport()).state, deployment).toBe("running");
      expect((await runtime(deployment).record()).launches, deployment).toHaveLength(1);
    }

    // The next deploy has no container ("0"): every running one is stopped, none started.
    ctx = createExecutionContext();
    worker.scheduled!(controller, { ...testEnv, EDGECLAW_COMPANION_CONTAINER: "0" }, ctx);
    await waitOnExecutionContext(ctx);
    for (const deployment of [DEPLOYMENT, "tgall", "sockmm"]) {
      expect((await companion(deployment).containerReport()).state, deployment).toBe("not-wanted");
      expect(await runtime(deployment).record(), deployment).toMatchObject({
        halts: 1,
        running: false,
      });
      expect((await runtime(deployment).record()).launches, deployment).toHaveLength(1);
    }
  });
});
