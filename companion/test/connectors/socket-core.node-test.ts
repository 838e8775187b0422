import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  startFakeMattermost,
  type FakeMattermost,
} from "../../../functions/channels/mattermost/simulate/mattermost-api.ts";
import { Companion } from "../../src/companion.ts";
import { connectorSource } from "../../src/connectors/index.ts";
import { FakeWorker } from "../fake-worker.ts";
import { companionEnv, KEY, quietLog, settings, tempDir, until } from "../helpers.ts";
import {
  eventsApiEnvelope,
  FakeSlackSocketMode,
} from "../../../functions/channels/slack/simulate/slack-socket.ts";

/**
 * Slack Socket Mode and Mattermost through the real companion core (outbox, signed batches, lease,
 * fenced state) against a loopback Worker (fake-worker.ts): a Socket Mode envelope is acked only
 * after the Worker stored it; Mattermost posts made while the companion was down are forwarded
 * after it comes back (cursors kept through the Worker), each stored once.
 */

const APP_TOKEN = "xapp-1-core-test";
const MM_TOKEN = "mm-test-token";

describe("socket connectors through the companion core", () => {
  let slack: FakeSlackSocketMode;
  let mattermost: FakeMattermost;
  let worker: FakeWorker;
  const running: Companion[] = [];

  before(async () => {
    slack = await new FakeSlackSocketMode(APP_TOKEN).listen();
    mattermost = await startFakeMattermost();
    worker = await new FakeWorker({
      keys: [KEY],
      accounts: [
        {
          channel: "slack",
          accountId: "sock",
          label: "Slack",
          settings: { apiBaseUrl: slack.apiBaseUrl },
          secretEnv: { appToken: "SLACK_APP_TOKEN" },
        },
        {
          channel: "mattermost",
          accountId: "default",
          label: "Mattermost",
          settings: { baseUrl: mattermost.url, dangerouslyAllowPrivateNetwork: true },
          secretEnv: { botToken: "MATTERMOST_BOT_TOKEN" },
        },
      ],
      leaseTtlMs: 3_000,
    }).start();
  });
  after(async () => {
    for (const companion of running.splice(0)) await companion.stop().catch(() => undefined);
    await worker.stop();
    await slack.close();
    await mattermost.stop();
  });

  async function startCompanion(dataDir: string): Promise<Companion> {
    const env = companionEnv(worker.url, dataDir, {
      SLACK_APP_TOKEN: APP_TOKEN,
      MATTERMOST_BOT_TOKEN: MM_TOKEN,
    });
    const companion = new Companion(settings(env), connectorSource(), env, quietLog);
    await companion.start();
    running.push(companion);
    return companion;
  }

  it("acks a Slack envelope only after the Worker stored it; Mattermost posts missed while down arrive after a restart, once", async () => {
    const dataDir = tempDir();
    const first = await startCompanion(dataDir);
    const connection = await until(() => slack.connections[0], 10_000, "slack connected");

    let release!: () => void;
    worker.hold = new Promise((resolve) => (release = resolve));
    slack.send(connection, eventsApiEnvelope("env-core-1", "EvCore1"));
    await until(
      () => worker.received.includes("event:EvCore1") || undefined,
      10_000,
      "batch received",
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(connection.received, [], "no ack while the Worker has not answered");
    worker.hold = undefined;
    release();
    await until(() => connection.received.length === 1 || undefined, 10_000, "ack");
    const stored = worker.stored.find((s) => s.eventId === "event:EvCore1")!;
    assert.ok(connection.receivedAt[0]! >= stored.storedAt, "acked after it was stored");

    const post = (message: string) =>
      fetch(`${mattermost.url}/_control/user-post`, {
        method: "POST",
        body: JSON.stringify({
          channel_id: "corechannel000000000000000",
          channel_type: "O",
          user_id: "coreuser000000000000000000",
          message,
        }),
      });
    const mmStored = () =>
      worker.stored
        .filter((s) => s.channel === "mattermost")
        .map(
          (s) =>
            JSON.parse(String((s.payload as { event: { data: { post: string } } }).event.data.post))
              .message as string,
        );
    const sockets = async () =>
      ((await (await fetch(`${mattermost.url}/_control/sockets`)).json()) as { open: number }).open;
    await until(
      async () => ((await sockets()) >= 1 ? true : undefined),
      10_000,
      "mattermost connected",
    );
    await post("while up");
    await until(() => mmStored().includes("while up") || undefined, 10_000, "live post stored");
    await until(
      () => worker.state.get("mattermost/default/cursors")?.includes("corechannel") || undefined,
      10_000,
      "cursor saved through the Worker",
    );

    await first.stop();
    await post("while down 1");
    await post("while down 2");
    await startCompanion(dataDir);
    await until(() => mmStored().length === 3 || undefined, 15_000, "missed posts forwarded");
    assert.deepEqual(mmStored(), ["while up", "while down 1", "while down 2"]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(
      worker.stored.filter((s) => s.channel === "mattermost").length,
      3,
      "each post stored once",
    );
  });
});
