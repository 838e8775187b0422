import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { WebSocket } from "ws";
import {
  discordAccount,
  discordBotUserId,
  discordChannelSchema,
} from "../../functions/channels/discord/config.ts";
import { parseDiscordDispatch } from "../../functions/channels/discord/parse.ts";
import { simulator as discordSimulator } from "../../functions/channels/discord/simulate/simulator.ts";
import { killStartedDevs } from "./dev-process.ts";
import { checkDefaultPath, startSimulatedStack } from "./simulated-dev.ts";

/**
 * The Discord simulator: its fake speaks the Gateway (GET /gateway/bot, HELLO, IDENTIFY → READY
 * naming the token's bot) beside REST; a simulated message is a MESSAGE_CREATE the Worker's own
 * parser takes; and, end to end, `simulate discord` reaches the companion `npm run dev` started,
 * prints the agent's reply read back from the fake, and the Worker's refusal for a group.
 */
after(killStartedDevs);

/** A Gateway client as far as READY: the frames it received from then on. */
async function identify(fakeUrl: string, token: string): Promise<Array<Record<string, unknown>>> {
  const bot = (await (
    await fetch(`${fakeUrl}/api/v10/gateway/bot`, { headers: { authorization: `Bot ${token}` } })
  ).json()) as { url: string };
  const frames: Array<Record<string, unknown>> = [];
  const socket = new WebSocket(`${bot.url}?v=10&encoding=json`);
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      frames.push(frame);
      if (frame.op === 10)
        socket.send(JSON.stringify({ op: 2, d: { token, intents: 0, properties: {} } }));
      if (frame.t === "READY") resolve();
    });
  });
  return frames;
}

describe("discord simulator", () => {
  it("points every account at the fake and generates a token shaped like Discord's", () => {
    const fresh = discordSimulator.prepare(
      { accounts: { ops: { token: { source: "env", id: "OPS_TOKEN" } } } },
      "http://127.0.0.1:9",
      {},
    );
    assert.equal(fresh.block.apiBaseUrl, "http://127.0.0.1:9/api/v10");
    assert.equal(
      (fresh.block.accounts as Record<string, { apiBaseUrl: string }>).ops!.apiBaseUrl,
      "http://127.0.0.1:9/api/v10",
    );
    const account = discordAccount(discordChannelSchema.parse(fresh.block), "default")!;
    assert.equal(
      discordBotUserId(fresh.env.DISCORD_BOT_TOKEN, account),
      "1100000000000000001",
      "the Worker reads the bot's id from the generated token",
    );
    const kept = discordSimulator.prepare(undefined, "http://127.0.0.1:9", {
      DISCORD_BOT_TOKEN: "MTEwMDAwMDAwMDAwMDAwMDAwMQ.mine.x",
    });
    assert.deepEqual(kept.env, {});
  });

  it("dispatches a MESSAGE_CREATE on the Gateway session that the Worker parses (DM, guild channel with a mention)", async () => {
    const fake = await discordSimulator.startFake();
    try {
      const prepared = discordSimulator.prepare(undefined, fake.url, {});
      const token = prepared.env.DISCORD_BOT_TOKEN!;
      const frames = await identify(fake.url, token);
      const ready = frames.find((frame) => frame.t === "READY")!.d as { user: { id: string } };
      assert.equal(ready.user.id, "1100000000000000001");
      const account = discordAccount(discordChannelSchema.parse(prepared.block), "default")!;
      const ctx = { account, botUserId: ready.user.id, receivedAt: Date.now() };

      const dm = await discordSimulator.socket!.deliver(
        { text: "hello" },
        { fakeUrl: fake.url, secrets: prepared.secrets, deadline: Date.now() + 5_000 },
      );
      const group = await discordSimulator.socket!.deliver(
        { group: "1300000000000000011", text: "<@1100000000000000001> status" },
        { fakeUrl: fake.url, secrets: prepared.secrets, deadline: Date.now() + 5_000 },
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const created = frames.filter((frame) => frame.t === "MESSAGE_CREATE");
      assert.equal(created.length, 2);
      assert.equal(dm.eventId, `message:${(created[0]!.d as { id: string }).id}`);
      assert.equal(group.eventId, `message:${(created[1]!.d as { id: string }).id}`);
      const parsedDm = parseDiscordDispatch(created[0], ctx);
      assert.ok(parsedDm.kind === "envelopes", JSON.stringify(parsedDm));
      assert.equal(parsedDm.envelopes[0]!.chatType, "direct");
      assert.equal(parsedDm.envelopes[0]!.text, "hello");
      const parsedGroup = parseDiscordDispatch(created[1], ctx);
      assert.ok(parsedGroup.kind === "envelopes", JSON.stringify(parsedGroup));
      assert.equal(parsedGroup.envelopes[0]!.teamId, "1300000000000000001");
      assert.equal(parsedGroup.envelopes[0]!.wasMentioned, true);
    } finally {
      await fake.stop();
    }
  });

  it("says so when no companion holds the Gateway, instead of waiting out the timeout", async () => {
    const fake = await discordSimulator.startFake();
    try {
      await assert.rejects(
        discordSimulator.socket!.deliver(
          { text: "hello" },
          { fakeUrl: fake.url, secrets: {}, deadline: Date.now() + 500 },
        ),
        /the companion has not identified on the simulated Gateway after \d+ s.*EDGECLAW_DEV_COMPANION=0/,
      );
    } finally {
      await fake.stop();
    }
  });
});

describe("edgeclaw simulate discord against EDGECLAW_SIMULATE=1 npm run dev", () => {
  it("a stranger is told about pairing; once approved, the agent answers over the companion; a group is refused with its key", {
    timeout: 420_000,
  }, async () => {
    const stack = await startSimulatedStack(`{ channels: { discord: {} } }`, "discord");
    try {
      assert.match(
        stack.dev.output(),
        /Simulated discord at .* \(its socket held by the companion\)/,
      );
      await checkDefaultPath(stack, "discord", {
        group: ["--group", "1300000000000000011", "<@1100000000000000001> hi"],
        groupKey: "channels.discord.guilds",
      });
      // An event the Worker takes nothing from says why, from its answer to the companion.
      const own = await stack.edgeclaw([
        "simulate",
        "discord",
        "--from",
        "1100000000000000001",
        "--timeout",
        "30",
        "an echo of the bot",
      ]);
      assert.equal(own.status, 1, own.log);
      assert.match(
        own.stdout,
        /^delivered \(over the companion\); nothing was taken from it: the bot's own message$/m,
        own.log,
      );
    } finally {
      await stack.stop();
    }
  });
});
