import { startFakeDiscordApi } from "./discord-api.ts";
import { untilConnected } from "../../../../scripts/simulate/socket-wait.ts";
import type { ChannelSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { simulatedSecret } from "../../../../scripts/simulate/secrets.ts";

/**
 * Discord played by the fake REST API and its Gateway (functions/channels/discord/simulate/discord-api.ts,
 * discord-gateway.ts: one server). The companion connects to the Gateway as to Discord's
 * (GET /gateway/bot, HELLO, IDENTIFY, READY, heartbeats); a simulated message is a MESSAGE_CREATE
 * dispatch on that session, and the reply is read back from the messages the bot posted over REST.
 * `--group` is a guild text channel id in the simulated server SIM_GUILD, `--thread` a thread under
 * it (announced first with THREAD_CREATE, as Discord does, so the companion knows its parent).
 * Mention the bot as <@1100000000000000001>, the id in the generated token.
 */
export const SIM_GUILD = "1300000000000000001";
/** The bot's user id: Discord's token starts with the base64 of it, and the fake READY says so. */
const BOT_ID = "1100000000000000001";
const DEFAULT_SENDER = "1200000000000000002";

/** A DM channel per sender (Discord gives each pair of users one), here derived from the sender id. */
function channelOf(message: SimulatedMessage): string {
  if (message.thread) return message.thread;
  if (message.group) return message.group;
  return `19${(message.from ?? DEFAULT_SENDER).slice(2)}`;
}

let lastSnowflake = 0n;
/** Increasing message ids shaped like Discord's (milliseconds since 2015 in the top bits). */
function snowflake(): string {
  const next = (BigInt(Date.now()) - 1_420_070_400_000n) << 22n;
  lastSnowflake = next > lastSnowflake ? next : lastSnowflake + 1n;
  return String(lastSnowflake);
}

async function dispatch(fakeUrl: string, t: string, d: unknown): Promise<Response> {
  return fetch(`${fakeUrl}/_control/dispatch`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ t, d }),
  });
}

export const simulator: ChannelSimulator = {
  id: "discord",
  startFake: () => startFakeDiscordApi(),
  prepare(block, fakeUrl, env) {
    const own = block ?? {};
    const apiBaseUrl = `${fakeUrl}/api/v10`;
    const accounts = Object.fromEntries(
      Object.entries(
        (own.accounts as Record<string, Record<string, unknown>> | undefined) ?? {},
      ).map(([id, account]) => [id, { ...account, apiBaseUrl }]),
    );
    // Shaped like Discord's: the bot's id in base64, then two more segments.
    const prefix = `${Buffer.from(BOT_ID).toString("base64").replace(/=+$/, "")}.sim.`;
    const token = simulatedSecret(own.token, "DISCORD_BOT_TOKEN", env, prefix);
    return {
      block: { ...own, apiBaseUrl, ...(Object.keys(accounts).length ? { accounts } : {}) },
      env: { ...token.add },
      secrets: {},
    };
  },
  socket: {
    async deliver(message, { fakeUrl, deadline }) {
      const author = message.from ?? DEFAULT_SENDER;
      const channel = channelOf(message);
      const guild = message.group ? { guild_id: SIM_GUILD } : {};
      const mentions = [...message.text.matchAll(/<@!?(\d+)>/g)].map((m) => ({
        id: m[1]!,
        username: m[1] === BOT_ID ? "edgeclaw" : `user${m[1]}`,
      }));
      const id = snowflake();
      const created = {
        id,
        channel_id: channel,
        ...guild,
        author: { id: author, username: `sim${author.slice(-4)}`, global_name: "Sim" },
        ...(message.group ? { member: { roles: [], nick: null } } : {}),
        content: message.text,
        type: 0,
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions,
        mention_roles: [],
        attachments: [],
        embeds: [],
      };
      await untilConnected(
        "Discord",
        "the companion has not identified on the simulated Gateway",
        deadline,
        async () => {
          if (message.thread && message.group) {
            const thread = {
              id: message.thread,
              guild_id: SIM_GUILD,
              parent_id: message.group,
              type: 11,
              name: "Simulated thread",
            };
            const announced = await dispatch(fakeUrl, "THREAD_CREATE", thread);
            await announced.body?.cancel();
            if (announced.status === 409) return false;
          }
          const sent = await dispatch(fakeUrl, "MESSAGE_CREATE", created);
          await sent.body?.cancel();
          if (sent.status === 409) return false;
          if (!sent.ok) throw new Error(`the simulated Discord answered ${sent.status}`);
          return true;
        },
      );
      // The companion's outbox key for a MESSAGE_CREATE (functions/channels/discord/companion/protocol.ts).
      return { eventId: `message:${id}` };
    },
  },
  async replies(fakeUrl, message) {
    const res = await fetch(
      `${fakeUrl}/_control/messages?channel_id=${encodeURIComponent(channelOf(message))}`,
    );
    const stored = (await res.json()) as Array<{ content: string; deleted?: boolean }>;
    return stored.filter((m) => !m.deleted).map((m) => m.content);
  },
};
