import { startFakeMattermost } from "./mattermost-api.ts";
import { FAKE_MATTERMOST_BOT } from "./mattermost-identity.ts";
import { untilConnected } from "../../../../scripts/simulate/socket-wait.ts";
import type { ChannelSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { pointedAtFake } from "../../../../scripts/simulate/loopback-block.ts";
import { simulatedSecret } from "../../../../scripts/simulate/secrets.ts";

/**
 * Mattermost played by the fake server (functions/channels/mattermost/simulate/mattermost-api.ts): REST v4 and the
 * WebSocket the companion authenticates on. A simulated message is a user's post, broadcast as a
 * `posted` event on that socket as Mattermost does; the reply is read back from the bot's posts.
 * `--group` is an open channel id, `--thread` the id of the root post to answer under. Mention the
 * bot as @edgebot (the fake's bot user).
 */
const DEFAULT_SENDER = "mmsimuser00000000000000000";

/** A DM channel per sender (Mattermost keeps one per pair of users), here derived from the sender id. */
function channelOf(message: SimulatedMessage): string {
  return message.group ?? `mmdm${(message.from ?? DEFAULT_SENDER).slice(4)}`;
}

export const simulator: ChannelSimulator = {
  id: "mattermost",
  // Any bot token: `prepare` generates it (or keeps the one the config resolves to) after the start.
  startFake: () => startFakeMattermost({ tokens: (token) => !token.endsWith("invalid") }),
  prepare(block, fakeUrl, env) {
    const own = block ?? {};
    const token = simulatedSecret(own.botToken, "MATTERMOST_BOT_TOKEN", env, "mm-sim-");
    return {
      block: pointedAtFake(own, "baseUrl", fakeUrl),
      env: { ...token.add },
      secrets: {},
    };
  },
  socket: {
    async deliver(message, { fakeUrl, deadline }) {
      // A post made while no socket listens is only found by the companion's repair later: wait.
      await untilConnected(
        "Mattermost",
        "the companion has not authenticated on the simulated Mattermost WebSocket",
        deadline,
        async () => {
          const res = await fetch(`${fakeUrl}/_control/sockets`);
          return ((await res.json()) as { open: number }).open > 0;
        },
      );
      const from = message.from ?? DEFAULT_SENDER;
      const res = await fetch(`${fakeUrl}/_control/user-post`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          channel_id: channelOf(message),
          channel_type: message.group ? "O" : "D",
          user_id: from,
          message: message.text,
          ...(message.thread ? { root_id: message.thread } : {}),
          sender_name: `sim${from.slice(-4)}`,
        }),
      });
      if (!res.ok) throw new Error(`the simulated Mattermost answered ${res.status}`);
      const post = (await res.json()) as { id: string };
      // The companion's outbox key for a posted event (functions/channels/mattermost/companion/connector.ts).
      return { eventId: `posted:${post.id}` };
    },
  },
  async replies(fakeUrl, message) {
    const res = await fetch(
      `${fakeUrl}/_control/posts?channel=${encodeURIComponent(channelOf(message))}`,
    );
    const posts = (await res.json()) as Array<{
      user_id: string;
      message: string;
      root_id: string;
      delete_at: number;
      create_at: number;
    }>;
    return posts
      .filter(
        (post) =>
          post.user_id === FAKE_MATTERMOST_BOT.id &&
          post.delete_at === 0 &&
          (!message.thread || post.root_id === message.thread),
      )
      .sort((a, b) => a.create_at - b.create_at)
      .map((post) => `${post.root_id ? `[thread ${post.root_id}] ` : ""}${post.message}`);
  },
};
