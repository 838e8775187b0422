import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { WebSocket } from "ws";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { mattermostSocket } from "../../functions/channels/mattermost/socket.ts";
import { mattermostChannel } from "../../functions/channels/mattermost/index.ts";
import { rootOf } from "../../functions/channels/channel-account.ts";
import { FAKE_MATTERMOST_BOT } from "../../functions/channels/mattermost/simulate/mattermost-identity.ts";
import { simulator as mattermostSimulator } from "../../functions/channels/mattermost/simulate/simulator.ts";
import { killStartedDevs } from "./dev-process.ts";
import { checkDefaultPath, startSimulatedStack } from "./simulated-dev.ts";

/**
 * The Mattermost simulator: a simulated message is a user's post that the fake broadcasts as
 * `posted` on the authenticated WebSocket, which the Worker's own parser takes; replies are the bot's
 * posts; and, end to end, `simulate mattermost` reaches the companion `npm run dev` started.
 */
after(killStartedDevs);

/** A Mattermost WebSocket client, authenticated: the events it received from then on. */
async function listen(fakeUrl: string, token: string) {
  const events: Array<Record<string, unknown>> = [];
  const socket = new WebSocket(`${fakeUrl.replace(/^http/, "ws")}/api/v4/websocket`);
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.once("open", () =>
      socket.send(JSON.stringify({ seq: 1, action: "authentication_challenge", data: { token } })),
    );
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      if (frame.event === "hello") resolve();
      else if (frame.event) events.push(frame);
    });
  });
  return { events, close: () => socket.close() };
}

describe("mattermost simulator", () => {
  it("points every account at the fake (loopback allowed) and generates the bot token", () => {
    const fresh = mattermostSimulator.prepare(
      { accounts: { ops: { botToken: "${OPS_TOKEN}" } } },
      "http://127.0.0.1:9",
      {},
    );
    const config = parseConfig({ channels: { mattermost: fresh.block } });
    const accounts = mattermostSocket.accounts(rootOf(mattermostChannel, config)!, fresh.env);
    assert.deepEqual(
      accounts.map((a) => [a.accountId, a.connector.settings]),
      [["ops", { baseUrl: "http://127.0.0.1:9", dangerouslyAllowPrivateNetwork: true }]],
    );
    assert.match(fresh.env.MATTERMOST_BOT_TOKEN!, /^mm-sim-[0-9a-f]{32}$/);
  });

  it("posts as a user, broadcast on the socket as Mattermost does, and reads back only the bot's replies", async () => {
    const fake = await mattermostSimulator.startFake();
    try {
      const prepared = mattermostSimulator.prepare(undefined, fake.url, {});
      const client = await listen(fake.url, prepared.env.MATTERMOST_BOT_TOKEN!);
      const target = { fakeUrl: fake.url, secrets: prepared.secrets, deadline: Date.now() + 5_000 };
      const dm = await mattermostSimulator.socket!.deliver({ text: "hello" }, target);
      const group = await mattermostSimulator.socket!.deliver(
        { group: "mmteamchannel0000000000000", text: "@edgebot status" },
        target,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      client.close();
      const posted = client.events.filter((frame) => frame.event === "posted");
      assert.equal(posted.length, 2);
      const parsedConfig = parseConfig({ channels: { mattermost: prepared.block } });
      const account = mattermostSocket.accounts(
        rootOf(mattermostChannel, parsedConfig)!,
        prepared.env,
      )[0]!;
      const self = { userId: FAKE_MATTERMOST_BOT.id, username: FAKE_MATTERMOST_BOT.username };
      const parse = (frame: Record<string, unknown>) =>
        mattermostSocket.parse(
          { eventId: "x", payload: { event: frame, self }, receivedAt: Date.now() },
          account,
          prepared.env,
        );
      const parsedDm = await parse(posted[0]!);
      assert.ok(parsedDm.kind === "envelopes", JSON.stringify(parsedDm));
      assert.equal(parsedDm.envelopes[0]!.chatType, "direct");
      const post = JSON.parse(String((posted[0]!.data as { post: string }).post)) as { id: string };
      assert.equal(dm.eventId, `posted:${post.id}`);
      const parsedGroup = await parse(posted[1]!);
      assert.ok(parsedGroup.kind === "envelopes", JSON.stringify(parsedGroup));
      assert.equal(parsedGroup.envelopes[0]!.wasMentioned, true);
      assert.ok(group.eventId.startsWith("posted:"));
      // The user's own post is not a reply.
      assert.deepEqual(await mattermostSimulator.replies(fake.url, { text: "" }), []);
    } finally {
      await fake.stop();
    }
  });
});

describe("edgeclaw simulate mattermost against EDGECLAW_SIMULATE=1 npm run dev", () => {
  it("a stranger is told about pairing; once approved, the agent answers over the companion; a group is refused with its key", {
    timeout: 420_000,
  }, async () => {
    const stack = await startSimulatedStack(`{ channels: { mattermost: {} } }`, "mattermost");
    try {
      await checkDefaultPath(stack, "mattermost", {
        group: ["--group", "mmteamchannel0000000000000", "@edgebot hi"],
        groupKey: "channels.mattermost.groups",
      });
    } finally {
      await stack.stop();
    }
  });
});
