import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import {
  telegramAccount,
  telegramChannelSchema,
} from "../../functions/channels/telegram/config.ts";
import { parseTelegramUpdate } from "../../functions/channels/telegram/parse.ts";
import { simulator as telegramSimulator } from "../../functions/channels/telegram/simulate/simulator.ts";
import { killStartedDevs } from "./dev-process.ts";
import { checkDefaultPath, startSimulatedStack } from "./simulated-dev.ts";

/**
 * The Telegram simulator for a long-polling account (`mode: "polling"`): a simulated message is an
 * Update the fake's getUpdates hands out, which the Worker's own parser takes; and, end to end,
 * `simulate telegram` reaches the companion `npm run dev` started for the polling account.
 */
after(killStartedDevs);

describe("telegram simulator, long polling", () => {
  it("queues an Update that getUpdates hands out and the Worker parses, once someone polls", async () => {
    const fake = await telegramSimulator.startFake();
    try {
      const prepared = telegramSimulator.prepare({ mode: "polling" }, fake.url, {});
      const token = prepared.env.TELEGRAM_BOT_TOKEN!;
      assert.equal(prepared.secrets.botId, "7100000001");
      await assert.rejects(
        telegramSimulator.socket!.deliver(
          { text: "nobody polls" },
          { fakeUrl: fake.url, secrets: prepared.secrets, deadline: Date.now() + 300 },
        ),
        /the companion has not called getUpdates on the simulated Bot API/,
      );
      // A poller (the companion does this) makes the simulator hand the update over.
      const getUpdates = async () =>
        (
          (await (
            await fetch(`${fake.url}/bot${token}/getUpdates`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ timeout: 0 }),
            })
          ).json()) as { result: Array<{ update_id: number }> }
        ).result;
      assert.deepEqual(await getUpdates(), []);
      const { eventId } = await telegramSimulator.socket!.deliver(
        { text: "hello" },
        { fakeUrl: fake.url, secrets: prepared.secrets, deadline: Date.now() + 5_000 },
      );
      const updates = await getUpdates();
      assert.equal(updates.length, 1);
      assert.equal(eventId, String(updates[0]!.update_id));
      const account = telegramAccount(telegramChannelSchema.parse(prepared.block), "default");
      const parsed = parseTelegramUpdate(new TextEncoder().encode(JSON.stringify(updates[0])), {
        account,
        botId: "7100000001",
        receivedAt: Date.now(),
      });
      assert.ok(parsed.kind === "envelopes", JSON.stringify(parsed));
      assert.equal(parsed.envelopes[0]!.text, "hello");
    } finally {
      await fake.stop();
    }
  });
});

describe("edgeclaw simulate telegram (polling) against EDGECLAW_SIMULATE=1 npm run dev", () => {
  it("a stranger is told about pairing; once approved, the agent answers over the companion; a group is refused with its key", {
    timeout: 420_000,
  }, async () => {
    const stack = await startSimulatedStack(
      `{ channels: { telegram: { mode: "polling" } } }`,
      "telegram",
    );
    try {
      assert.match(stack.dev.output(), /Companion: Telegram/);
      await checkDefaultPath(stack, "telegram", {
        // Another sender: Telegram lets the DM allowlist (the approved sender) into groups too.
        group: ["--group=-1001234567890", "--from", "515151", "@edgeclaw_sim_bot hi"],
        groupKey: "channels.telegram.groups",
      });
    } finally {
      await stack.stop();
    }
  });
});
