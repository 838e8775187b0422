import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { WebSocket } from "ws";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { slackSocket } from "../../functions/channels/slack/socket.ts";
import { slackChannel } from "../../functions/channels/slack/index.ts";
import { rootOf } from "../../functions/channels/channel-account.ts";
import { simulator as slackSimulator } from "../../functions/channels/slack/simulate/simulator.ts";
import { killStartedDevs } from "./dev-process.ts";
import { checkDefaultPath, startSimulatedStack } from "./simulated-dev.ts";

/**
 * The Slack simulator for a Socket Mode account (`mode: "socket"`): the fake Web API also answers
 * apps.connections.open with the app-level token and serves the WebSocket; a simulated message is
 * an `events_api` envelope on it that the Worker's own Socket Mode parser takes; and, end to end,
 * `simulate slack` reaches the companion `npm run dev` started for the Socket Mode account.
 */
after(killStartedDevs);

/** A Socket Mode client: opens a connection with the app token; the envelopes it received. */
async function connect(fakeUrl: string, appToken: string) {
  const opened = (await (
    await fetch(`${fakeUrl}/api/apps.connections.open`, {
      method: "POST",
      headers: { authorization: `Bearer ${appToken}` },
    })
  ).json()) as { ok: boolean; url: string };
  assert.ok(opened.ok, JSON.stringify(opened));
  const frames: Array<Record<string, unknown>> = [];
  const socket = new WebSocket(opened.url);
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      if (frame.type === "hello") resolve();
      else frames.push(frame);
    });
  });
  return { frames, close: () => socket.close() };
}

describe("slack simulator, Socket Mode", () => {
  it("generates the app-level token only for a Socket Mode block", () => {
    const socket = slackSimulator.prepare({ mode: "socket" }, "http://127.0.0.1:9", {});
    assert.match(socket.env.SLACK_APP_TOKEN!, /^xapp-sim-[0-9a-f]{32}$/);
    assert.equal(
      slackSimulator.prepare({}, "http://127.0.0.1:9", {}).env.SLACK_APP_TOKEN,
      undefined,
    );
  });

  it("sends an events_api envelope on the open connection that the Worker parses, and refuses a wrong app token", async () => {
    const fake = await slackSimulator.startFake();
    try {
      const prepared = slackSimulator.prepare({ mode: "socket" }, fake.url, {});
      const refused = await fetch(`${fake.url}/api/apps.connections.open`, {
        method: "POST",
        headers: { authorization: "Bearer xapp-invalid" },
      });
      assert.deepEqual(await refused.json(), { ok: false, error: "invalid_auth" });
      const client = await connect(fake.url, prepared.env.SLACK_APP_TOKEN!);
      const { eventId } = await slackSimulator.socket!.deliver(
        { text: "hello" },
        { fakeUrl: fake.url, secrets: prepared.secrets, deadline: Date.now() + 5_000 },
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      client.close();
      assert.equal(client.frames.length, 1);
      const envelope = client.frames[0]!;
      assert.equal(envelope.type, "events_api");
      assert.equal(eventId, `event:${(envelope.payload as { event_id: string }).event_id}`);
      const config = parseConfig({ channels: { slack: prepared.block } });
      const account = slackSocket.accounts(rootOf(slackChannel, config)!, prepared.env)[0]!;
      const parsed = await slackSocket.parse(
        { eventId, payload: envelope, receivedAt: Date.now() },
        account,
        prepared.env,
      );
      assert.ok(parsed.kind === "envelopes", JSON.stringify(parsed));
      assert.equal(parsed.envelopes[0]!.chatType, "direct");
      assert.equal(parsed.envelopes[0]!.text, "hello");
    } finally {
      await fake.stop();
    }
  });
});

describe("edgeclaw simulate slack (Socket Mode) against EDGECLAW_SIMULATE=1 npm run dev", () => {
  it("a stranger is told about pairing; once approved, the agent answers over the companion; a group is refused with its key", {
    timeout: 420_000,
  }, async () => {
    const stack = await startSimulatedStack(`{ channels: { slack: { mode: "socket" } } }`, "slack");
    try {
      assert.match(stack.dev.output(), /Companion: Slack/);
      await checkDefaultPath(stack, "slack", {
        group: ["--group", "C0TEAM", "<@UBOTTEST> hi"],
        groupKey: "channels.slack.channels",
      });
    } finally {
      await stack.stop();
    }
  });
});
