import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeSignalDaemon } from "./simulate/signal-daemon.ts";
import { TEST_SIGNAL } from "./test-fixtures.ts";

/**
 * The workerd test suite's Signal (scripts/lib/channel-test-kits.ts): the fake signal-cli daemon,
 * and in front of it the companion's real HTTP surface (companion/src/http.ts: signed
 * `POST /v1/outbound`, receipts by command id) with the Signal sender for both test numbers — what
 * a running companion answers the Worker with, without its lease and ingress. The suite's
 * `companion.url` (test/setup/companion-front.ts) routes Signal's commands to it.
 */
export const testKit: ChannelTestKit = {
  async start() {
    // Loaded here, not above: vitest.config.ts reads this file with Node's type stripping, which
    // the companion's classes (parameter properties) do not pass; the global setup transpiles.
    const { startHttp } = await import("../../../companion/src/http.ts");
    const { memoryJournal } = await import("./companion/journal.ts");
    const { signalRpc } = await import("./companion/rpc.ts");
    const { signalSender } = await import("./companion/sender.ts");
    const fake = await startFakeSignalDaemon();
    fake.world.accounts.add(TEST_SIGNAL.team);
    for (const groupId of [TEST_SIGNAL.openGroup, TEST_SIGNAL.mentionGroup])
      fake.world.groups.set(groupId, { name: groupId, members: [] });
    const rpc = signalRpc(fake.url);
    const journal = memoryJournal();
    const numbers: Record<string, string> = {
      default: TEST_SIGNAL.bot.number,
      team: TEST_SIGNAL.team,
    };
    const senders = new Map(
      Object.entries(numbers).map(([accountId, number]) => [
        accountId,
        signalSender({ rpc, journal, accountParam: () => ({ account: number }) }),
      ]),
    );
    const receipts = new Map<string, unknown>();
    const companion = await startHttp(
      {
        outboundKeys: [TEST_SIGNAL.outboundKey],
        ready: () => ({ ready: true, detail: {} }),
        sender: (channel, accountId) => (channel === "signal" ? senders.get(accountId) : undefined),
        receipts: {
          get: (id) => receipts.get(id),
          save: (id, answer) => void receipts.set(id, answer),
        },
        log: () => undefined,
      },
      "127.0.0.1",
      0,
    );
    return {
      values: { url: fake.url, companionOutboundUrl: `http://127.0.0.1:${companion.port}` },
      stop: async () => {
        companion.server.closeAllConnections();
        await new Promise<void>((resolve) => companion.server.close(() => resolve()));
        await fake.stop();
      },
    };
  },
  config: (values) => ({
    account: TEST_SIGNAL.bot.number,
    accounts: {
      default: {
        accountUuid: TEST_SIGNAL.bot.uuid,
        transport: { kind: "external-native", url: values.url },
      },
      team: {
        account: TEST_SIGNAL.team,
        transport: { kind: "external-native", url: values.url },
        dmPolicy: "open",
        allowFrom: ["*"],
        sendReadReceipts: true,
        groupPolicy: "allowlist",
        groups: {
          "*": { requireMention: true },
          [TEST_SIGNAL.openGroup]: { requireMention: false },
        },
        groupAllowFrom: ["*"],
      },
    },
  }),
  bindings: (values) => ({
    FAKE_SIGNAL_URL: values.url,
    TEST_COMPANION_SIGNAL_SECRET: "test-companion-signal-secret",
  }),
  companionKeys: [{ id: "signal", secretEnv: "TEST_COMPANION_SIGNAL_SECRET" }],
};
