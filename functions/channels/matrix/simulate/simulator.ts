import { startFakeHomeserver } from "./matrix-homeserver.ts";
import { FAKE_MATRIX_BOT } from "./matrix-identity.ts";
import { fakeRoomId } from "./matrix-world.ts";
import { untilConnected } from "../../../../scripts/simulate/socket-wait.ts";
import type { ChannelSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { pointedAtFake } from "../../../../scripts/simulate/loopback-block.ts";
import { simulatedSecret } from "../../../../scripts/simulate/secrets.ts";

/**
 * Matrix played by the fake homeserver (functions/channels/matrix/simulate/matrix-homeserver.ts):
 * the client-server API the companion long-polls with /sync and the Worker replies through. A
 * simulated message is a user's `m.room.message` in a room the bot is in — a DM room per sender
 * (listed in the bot's m.direct) unless `--group` names a room; `--thread` the thread root's event
 * id. Mention the bot by its user id, @edgebot:fake.test.
 */
const DEFAULT_SENDER = "@simuser:fake.test";

function roomOf(message: SimulatedMessage): string {
  if (message.group)
    return message.group.startsWith("!") ? message.group : fakeRoomId(message.group);
  const sender = (message.from ?? DEFAULT_SENDER).replace(/[^a-z0-9]/gi, "");
  return fakeRoomId(`dm-${sender}`);
}

export const simulator: ChannelSimulator = {
  id: "matrix",
  startFake: () => startFakeHomeserver({ tokens: (token) => !token.endsWith("invalid") }),
  prepare(block, fakeUrl, env) {
    const own = block ?? {};
    const token = simulatedSecret(own.accessToken, "MATRIX_ACCESS_TOKEN", env, "mx-sim-");
    return {
      block: pointedAtFake(own, "homeserver", fakeUrl),
      env: { ...token.add },
      secrets: {},
    };
  },
  socket: {
    async deliver(message, { fakeUrl, deadline }) {
      const control = (path: string, body: unknown) =>
        fetch(`${fakeUrl}/_control/${path}`, { method: "POST", body: JSON.stringify(body) });
      const roomId = roomOf(message);
      const sender = message.from ?? DEFAULT_SENDER;
      await control("room", { roomId, joined: true });
      if (!message.group) await control("direct", { userId: sender, roomId });
      // The companion must be syncing, or the message waits for its first (initial) sync, which skips it.
      await untilConnected(
        "Matrix",
        "the companion has not synced with the simulated homeserver",
        deadline,
        async () => {
          const res = await fetch(`${fakeUrl}/_control/syncs`);
          return ((await res.json()) as { syncs: Array<string | null> }).syncs.some(Boolean);
        },
      );
      const content = {
        msgtype: "m.text",
        body: message.text,
        ...(message.thread
          ? { "m.relates_to": { rel_type: "m.thread", event_id: message.thread } }
          : {}),
      };
      const res = await control("message", { roomId, sender, content });
      if (!res.ok) throw new Error(`the simulated homeserver answered ${res.status}`);
      const sent = (await res.json()) as { event_id: string };
      return { eventId: sent.event_id };
    },
  },
  async replies(fakeUrl, message) {
    const res = await fetch(`${fakeUrl}/_control/sent?room=${encodeURIComponent(roomOf(message))}`);
    const events = (await res.json()) as Array<{
      content: { body?: string; "m.relates_to"?: { rel_type?: string; event_id?: string } };
    }>;
    return events
      .filter((event) => typeof event.content.body === "string")
      .map((event) => {
        const relation = event.content["m.relates_to"];
        const thread = relation?.rel_type === "m.thread" ? `[thread ${relation.event_id}] ` : "";
        return `${thread}${event.content.body}`;
      });
  },
};

export { FAKE_MATRIX_BOT };
