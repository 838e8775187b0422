import type { TestProject } from "vitest/node";
import { startLocalPostgres } from "../../scripts/lib/local-postgres.ts";
import { startFakeModelServer } from "../fakes/model-server.ts";
import { startFakeWebServer } from "../fakes/web-server.ts";
import { startFakeDohServer } from "../fakes/doh-server.ts";
import { startFakeRelayApi } from "../fakes/relay-api.ts";
import { TEST_SANDBOX_KEY } from "./test-config.ts";
import {
  channelTestKits,
  type FakeValues,
  testKitKey,
} from "../../scripts/lib/channel-test-kits.ts";
import { startSandboxServer } from "../../companion/src/sandbox/server.ts";
import { startCompanionFront } from "./companion-front.ts";
import { makeCondaRoot, SANDBOX_CONDA_PREFIX } from "../fakes/conda/root.ts";
import { startFakeContainerEngine } from "../fakes/container-engine.ts";
import { startBrowserRunStandin } from "../../scripts/lib/browser-run-standin.ts";
import { withTimeout } from "../../functions/core/with-timeout.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Starts the loopback services every workerd test talks to (Postgres, fake platforms, fake model
 * providers) and hands their addresses to the pool through `provide`. The platform fakes are shipped
 * code (functions/channels/<id>/simulate/: `edgeclaw simulate` plays the platforms with them),
 * started by each channel's test kit (functions/channels/<id>/test-kit.ts); the model,
 * web and DNS fakes live in test/fakes/; each exposes `/_control/*` endpoints that tests inside workerd call to script it and read its log.
 */
const STOP_TIMEOUT_MS = 10_000;

export default async function setup(project: TestProject) {
  const stops: Array<[name: string, stop: () => Promise<void>]> = [];
  const pg = await startLocalPostgres();
  stops.push(["Postgres", () => pg.stop()]);
  project.provide("databaseUrl", pg.databaseUrl);
  project.provide("pgWsProxy", pg.wsProxy);
  // A second way in to the same database that the Postgres tests may freeze, kill and count.
  project.provide("pgChaosProxy", (await pg.addBridge({ control: true })).wsProxy);
  const fakeModel = await startFakeModelServer();
  stops.push(["fake model", () => fakeModel.stop()]);
  project.provide("fakeModelUrl", fakeModel.url);
  const fakeWeb = await startFakeWebServer();
  stops.push(["fake web", () => fakeWeb.stop()]);
  project.provide("fakeWebUrl", fakeWeb.url);
  const fakeDoh = await startFakeDohServer();
  stops.push(["fake DoH", () => fakeDoh.stop()]);
  project.provide("fakeDohUrl", fakeDoh.url);
  const fakeRelay = await startFakeRelayApi();
  stops.push(["fake relay", () => fakeRelay.stop()]);
  project.provide("fakeRelayUrl", fakeRelay.url);
  // Each channel's fake platform, from its test kit (functions/channels/<id>/test-kit.ts); what it
  // hands on reaches vitest.config.ts, which points the test config and bindings at it.
  // A kit whose replies leave through the companion names its fake companion's /v1/outbound.
  const companionOutbound: Record<string, string> = {};
  for (const { channel, piece } of await channelTestKits()) {
    const fake = await piece.start();
    stops.push([`fake ${channel}`, () => fake.stop()]);
    project.provide(testKitKey(channel), fake.values);
    if (fake.values.companionOutboundUrl)
      companionOutbound[channel] = fake.values.companionOutboundUrl;
  }
  // The real local sandbox backend: the companion's sandbox host (bubblewrap), signed requests.
  // It sees a conda root at /opt/conda (the conda stand-in, test/fakes/conda/) as the image has one.
  const sandbox = await startSandboxServer({
    root: mkdtempSync(join(tmpdir(), "edgeclaw-test-sandbox-")),
    keys: [{ id: TEST_SANDBOX_KEY.id, secret: TEST_SANDBOX_KEY.secret }],
    binds: [{ source: makeCondaRoot(), target: SANDBOX_CONDA_PREFIX, writable: true }],
  });
  stops.push(["sandbox host", () => sandbox.stop()]);
  // companion.url of the test config: the sandbox host and the channels' fake companions behind one address.
  const front = await startCompanionFront({
    sandbox: `http://127.0.0.1:${sandbox.port}`,
    outbound: companionOutbound,
  });
  stops.push(["companion front", () => front.stop()]);
  project.provide("sandboxUrl", front.url);
  // The sandbox container backend's stand-in runtime: the image's host process per container.
  const containerEngine = await startFakeContainerEngine();
  stops.push(["container engine stand-in", () => containerEngine.stop()]);
  project.provide("containerEngineUrl", containerEngine.url);
  // The Browser Run stand-in over Debian's Chromium; a Chromium starts only when a test asks for a browser.
  const browserRun = await startBrowserRunStandin();
  stops.push(["Browser Run stand-in", () => browserRun.stop()]);
  project.provide("browserRunUrl", browserRun.url);

  // Teardown runs while the pool's workerd is still up, so a service that waits for its clients
  // to leave could wait for ever: each gets a bound, and one that overruns is named.
  return async () => {
    for (const [name, stop] of stops.reverse())
      await withTimeout(stop(), STOP_TIMEOUT_MS).catch((error: unknown) =>
        console.warn(`global teardown: the ${name} did not stop: ${String(error)}`),
      );
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    pgWsProxy: string;
    pgChaosProxy: string;
    fakeModelUrl: string;
    fakeWebUrl: string;
    fakeDohUrl: string;
    browserRunUrl: string;
    fakeRelayUrl: string;
    /** A channel's started fake (its test kit's `start`), under testKitKey(channel). */
    [channelKit: `channelKit:${string}`]: FakeValues;
    sandboxUrl: string;
    containerEngineUrl: string;
  }
}
