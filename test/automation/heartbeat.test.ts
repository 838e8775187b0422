import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { heartbeatEvent } from "../../durable-objects/scheduler/events.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { lastInteractionAt } from "../../durable-objects/session/last-inbound.ts";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { DEFAULT_HEARTBEAT_PROMPT } from "../../functions/config/automation-schema.ts";
import type { HeartbeatPlan } from "../../functions/automation/heartbeat.ts";
import { deleteFile, writeFile } from "../../functions/agent/workspace.ts";
import { newScenario, recorded, script } from "../agent/model-helpers.ts";
import { collectRunEvents, waitFor, webchatEvent } from "../durable-objects/helpers.ts";
import type { Env } from "../../workers/env.ts";

/**
 * A heartbeat turn inside a session (the scheduler builds the same event): an acknowledgement is
 * never delivered, an alert is; a busy session or an effectively empty HEARTBEAT.md skips the beat
 * without a model call; a beat never refreshes the session's idle timer. Each test uses a session
 * of its own, so agent:main:main stays as other files expect it.
 */
const testEnv = env as unknown as Env;

afterEach(async () => {
  await deleteFile(testEnv, "main", "HEARTBEAT.md");
});

function beat(scenario: string, channel: string, sessionKey: string): RoutedEvent {
  const plan: HeartbeatPlan = {
    agentId: "main",
    everyMs: 30 * 60_000,
    prompt: `${DEFAULT_HEARTBEAT_PROMPT} [scenario:${scenario}]`,
    ackMaxChars: 300,
    route: { channel: "slack", accountId: "default", to: channel },
  };
  return { ...heartbeatEvent(plan, crypto.randomUUID(), "interval", Date.now()), sessionKey };
}

const stub = (key: string) => testEnv.SESSIONS.get(testEnv.SESSIONS.idFromName(key));

async function slackMessages(channel: string): Promise<Array<{ text: string }>> {
  const res = await fetch(`${testEnv.FAKE_SLACK_URL}/_control/messages?channel=${channel}`);
  return (await res.json()) as Array<{ text: string }>;
}

async function settled(sessionKey: string, dedupKey: string) {
  return waitFor(
    async () => {
      const row = await runInDurableObject(stub(sessionKey), async (_i, state) =>
        new SessionStore(state.storage.sql).inbox.byKey(dedupKey),
      );
      return row?.state === "settled" && row;
    },
    15_000,
    "the beat to settle",
  );
}

function ids() {
  const id = crypto.randomUUID().slice(0, 8);
  return {
    scenario: newScenario("hb"),
    channel: `C0HB${id.toUpperCase()}`,
    sessionKey: `agent:main:hbtest-${id}`,
  };
}

describe("heartbeat turn", () => {
  it("HEARTBEAT_OK is not delivered, an alert is; neither refreshes the idle timer", async () => {
    const { scenario, channel, sessionKey } = ids();
    await script(scenario, [
      { type: "text", text: "HEARTBEAT_OK" },
      { type: "text", text: "The nightly backup failed twice; please look." },
    ]);
    // A real message first, so the session has an idle timer to keep.
    await collectRunEvents(await stub(sessionKey).chat(webchatEvent(sessionKey, "hello")));
    const before = await runInDurableObject(stub(sessionKey), async (_i, state) =>
      lastInteractionAt(new SessionStore(state.storage.sql)),
    );
    expect(before).toBeDefined();

    const ok = beat(scenario, channel, sessionKey);
    await stub(sessionKey).accept(ok);
    await settled(sessionKey, ok.envelope.dedupKey);
    const alert = beat(scenario, channel, sessionKey);
    await stub(sessionKey).accept(alert);
    await settled(sessionKey, alert.envelope.dedupKey);

    const posted = await waitFor(
      async () => {
        const messages = await slackMessages(channel);
        return messages.some((m) => m.text.includes("backup failed")) && messages;
      },
      10_000,
      "the alert in Slack",
    );
    expect(posted.map((m) => m.text).filter((t) => t.includes("HEARTBEAT_OK"))).toEqual([]);
    expect(posted.filter((m) => m.text.includes("backup failed"))).toHaveLength(1);
    expect(await recorded(scenario)).toHaveLength(2);
    const after = await runInDurableObject(stub(sessionKey), async (_i, state) =>
      lastInteractionAt(new SessionStore(state.storage.sql)),
    );
    expect(after).toBe(before);
  });

  it("reads HEARTBEAT.md into the beat, and skips the beat when the file is effectively empty", async () => {
    const { scenario, channel, sessionKey } = ids();
    await script(scenario, [{ type: "text", text: "HEARTBEAT_OK" }]);
    await writeFile(testEnv, "main", "HEARTBEAT.md", "# Heartbeat\n\n- \n- [ ]\n");
    const empty = beat(scenario, channel, sessionKey);
    await stub(sessionKey).accept(empty);
    await settled(sessionKey, empty.envelope.dedupKey);
    expect(await recorded(scenario)).toHaveLength(0);

    await writeFile(testEnv, "main", "HEARTBEAT.md", "# Heartbeat\n- check the deploy queue\n");
    const full = beat(scenario, channel, sessionKey);
    await stub(sessionKey).accept(full);
    await settled(sessionKey, full.envelope.dedupKey);
    const [request] = await recorded(scenario);
    expect(JSON.stringify(request!.body.messages)).toContain("check the deploy queue");
  });

  it("a busy session skips the beat: one run at a time, and the beat never queues behind it", async () => {
    const { scenario, channel, sessionKey } = ids();
    const work = newScenario("hb-busy-work");
    await script(work, [{ type: "text", text: "slow answer", delayMs: 1500 }]);
    await script(scenario, [{ type: "text", text: "should not run" }]);
    const running = stub(sessionKey).chat(webchatEvent(sessionKey, `long task [scenario:${work}]`));
    await waitFor(async () => (await recorded(work)).length > 0, 10_000, "the user's run to start");
    const busy = beat(scenario, channel, sessionKey);
    await stub(sessionKey).accept(busy);
    await settled(sessionKey, busy.envelope.dedupKey);
    await collectRunEvents(await running);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await recorded(scenario)).toHaveLength(0);
    expect(await slackMessages(channel)).toEqual([]);
  });
});
