import { untilConnected } from "../../../../scripts/simulate/socket-wait.ts";
import type { ChannelSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { startFakeSignalDaemon } from "./signal-daemon.ts";
import { FAKE_SIGNAL_BOT } from "./signal-world.ts";

/**
 * Signal played by the fake signal-cli daemon (functions/channels/signal/simulate/signal-daemon.ts):
 * the JSON-RPC daemon the companion's connector receives from and sends through. A simulated
 * message is a user's envelope waiting for the connector's next `receive` — a DM from `--from` (a
 * number, default +15550009999) unless `--group` names a group id. The bot is +15550000001;
 * mention it by writing its number. Every account is pointed at the fake as an external-native
 * daemon (nothing is spawned), and dev's companion answers the Worker's sends.
 */
const DEFAULT_SENDER = "+15550009999";

function conversationOf(message: SimulatedMessage): string {
  return message.group ? `group:${message.group}` : (message.from ?? DEFAULT_SENDER);
}

export const simulator: ChannelSimulator = {
  id: "signal",
  startFake: () => startFakeSignalDaemon(),
  prepare(block, fakeUrl) {
    const own = block ?? {};
    const transport = { kind: "external-native", url: fakeUrl };
    const accounts = Object.fromEntries(
      Object.entries(
        (own.accounts as Record<string, Record<string, unknown>> | undefined) ?? {},
      ).map(([id, account]) => [id, { ...account, transport }]),
    );
    return {
      block: {
        ...own,
        account: typeof own.account === "string" ? own.account : FAKE_SIGNAL_BOT.number,
        transport,
        ...(Object.keys(accounts).length ? { accounts } : {}),
      },
      env: {},
      secrets: {},
    };
  },
  socket: {
    async deliver(message, { fakeUrl, deadline }) {
      const control = (path: string, body: unknown) =>
        fetch(`${fakeUrl}/_control/${path}`, { method: "POST", body: JSON.stringify(body) });
      // The connector must be polling, or the message waits unseen until it is.
      await untilConnected(
        "Signal",
        "the companion has not called receive on the simulated signal-cli daemon",
        deadline,
        async () => {
          const res = await fetch(`${fakeUrl}/_control/state`);
          return ((await res.json()) as { receives: number }).receives > 0;
        },
      );
      if (message.group) await control("group", { groupId: message.group, name: message.group });
      const from = message.from ?? DEFAULT_SENDER;
      // The bot's number in the text becomes a native mention, as a Signal client makes one.
      const at = message.text.indexOf(FAKE_SIGNAL_BOT.number);
      const res = await control("message", {
        from,
        text: at < 0 ? message.text : message.text.replace(FAKE_SIGNAL_BOT.number, "\uFFFC"),
        ...(message.group ? { groupId: message.group } : {}),
        ...(at < 0
          ? {}
          : {
              mentions: [
                {
                  number: FAKE_SIGNAL_BOT.number,
                  uuid: FAKE_SIGNAL_BOT.uuid,
                  start: at,
                  length: 1,
                },
              ],
            }),
      });
      if (!res.ok) throw new Error(`the simulated signal-cli daemon answered ${res.status}`);
      const { timestamp } = (await res.json()) as { timestamp: number };
      return { eventId: `${from}:${timestamp}` };
    },
  },
  async replies(fakeUrl, message) {
    const query = new URLSearchParams({ to: conversationOf(message), method: "send" });
    const res = await fetch(`${fakeUrl}/_control/sent?${query}`);
    const calls = (await res.json()) as Array<{ params: { message?: string } }>;
    return calls.map((call) => call.params.message ?? "");
  },
};

export { FAKE_SIGNAL_BOT };
