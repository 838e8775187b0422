import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sessionStub } from "../durable-objects/helpers.ts";
import { enqueueReply } from "../../durable-objects/session/outbox/replies.ts";
import type { SessionState } from "../../durable-objects/session/state.ts";
import type { OutboxRow } from "../../durable-objects/session/storage.ts";
import type { ReplyRoute } from "../../functions/core/envelope.ts";
import {
  BOT_USER,
  messageEvent,
  newScenario,
  postSigned,
  scriptModel,
  scriptSlack,
  slackCalls,
  slackMessages,
  uniqueId,
} from "./slack/helpers.ts";
import { chatCalls, chatMessages, scriptGoogle } from "./googlechat/helpers.ts";
import { settle, waitFor } from "./wait.ts";

/**
 * A crash between the steps of a send, against the channels' fake platforms. The outbox writes a
 * "sending" mark before a send only where recovery learns from it (queued-state.ts): a Slack chunk
 * is queued "sending" in the run's transaction (Slack can reconcile it), a Google Chat chunk stays
 * "pending" (a repeat under its message id is dropped). Each crash must still end in one message.
 */

const nowTs = () =>
  `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;

function stateOf(instance: unknown): SessionState {
  return (instance as { s: SessionState }).s;
}

/** What a run's final transaction does with its reply, in the session's isolate; an alarm is due. */
async function queueReply(sessionKey: string, route: ReplyRoute, text: string) {
  return runInDurableObject(sessionStub(sessionKey), async (instance, state) => {
    const s = stateOf(instance);
    const prefix = `run:${crypto.randomUUID()}`;
    state.storage.transactionSync(() => enqueueReply(s, prefix, null, route, text, Date.now()));
    // Later than the test: only runDurableObjectAlarm runs it.
    await state.storage.setAlarm(Date.now() + 60_000);
    const id = `${prefix}:0`;
    return {
      id,
      row: s.store.outbox.rows().find((r) => r.id === id)!,
      untried: s.store.outbox.unattemptedHere(id),
    };
  });
}

async function outboxRow(sessionKey: string, id: string): Promise<OutboxRow | undefined> {
  return runInDurableObject(sessionStub(sessionKey), async (instance) =>
    stateOf(instance)
      .store.outbox.rows()
      .find((r) => r.id === id),
  );
}

/** Chunks not yet sent or dead. */
async function openChunks(sessionKey: string): Promise<number> {
  return runInDurableObject(
    sessionStub(sessionKey),
    async (instance) =>
      stateOf(instance)
        .store.outbox.rows()
        .filter((r) => r.state !== "sent" && r.state !== "dead").length,
  );
}

const shown = async (channel: string) =>
  (await slackMessages(channel)).filter((m) => !m.deleted).map((m) => m.text);

describe("a crash mid-send on a channel that reconciles (Slack)", () => {
  it("after the chunk is recorded and before its send: recovery asks Slack first, then posts once", async () => {
    const channel = uniqueId("C");
    const key = `agent:main:slack:channel:${channel.toLowerCase()}`;
    const route = { channel: "slack", accountId: "plain", to: channel };
    const queued = await queueReply(key, route, "Posted once, after the crash.");
    // Recorded as possibly attempted: no mark needs writing before the send.
    expect(queued.row).toMatchObject({ state: "sending", attempts: 0, firstAttemptAt: null });
    expect(queued.untried).toBe(true);

    // The isolate dies before it sends; the next one starts without its memory.
    await abortAllDurableObjects();
    expect(await runDurableObjectAlarm(sessionStub(key))).toBe(true);
    await waitFor(async () => ((await shown(channel)).length ? true : undefined));
    await settle(1000);

    expect(await shown(channel)).toEqual(["Posted once, after the crash."]);
    const history = await slackCalls("conversations.history", channel);
    const posts = await slackCalls("chat.postMessage", channel);
    expect(history.length).toBeGreaterThan(0);
    expect(posts).toHaveLength(1);
    // Reconciled ("missing") before the one post, never after it.
    expect((history[0] as unknown as { at: number }).at).toBeLessThanOrEqual(
      (posts[0] as unknown as { at: number }).at,
    );
    expect(await outboxRow(key, queued.id)).toMatchObject({ state: "sent", attempts: 1 });
  });

  it("after Slack took the post and before it was recorded sent: recovery finds it and posts nothing more", async () => {
    const scenario = newScenario("send-crash-slack");
    const answer = "Landed before the crash.";
    await scriptModel(scenario, [
      { type: "text", text: answer },
      { type: "text", text: answer },
    ]);
    const channel = uniqueId("C");
    const key = `agent:main:slack:channel:${channel.toLowerCase()}`;
    // Slack applies the post at once and answers late: the object dies meanwhile.
    await scriptSlack({ method: "chat.postMessage", channel, delayMs: 2000 });
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "channel",
        text: `<@${BOT_USER}> hello [scenario:${scenario}]`,
        ts: nowTs(),
      }),
      { path: "/slack/plain/events" },
    );
    await waitFor(
      async () => ((await slackCalls("chat.postMessage", channel)).length ? true : undefined),
      20_000,
    );
    // The isolate that queued the chunk sent it without asking Slack first.
    expect(await slackCalls("conversations.history", channel)).toHaveLength(0);
    await abortAllDurableObjects();
    await waitFor(async () => ((await shown(channel)).length ? true : undefined), 5_000);

    await runDurableObjectAlarm(sessionStub(key));
    await waitFor(async () => ((await openChunks(key)) === 0 ? true : undefined));
    await settle(1000);
    expect(await shown(channel)).toEqual([answer]);
    expect(await slackCalls("chat.postMessage", channel)).toHaveLength(1);
    expect((await slackCalls("conversations.history", channel)).length).toBeGreaterThan(0);
  });
});

describe("a crash mid-send on a channel whose sends are idempotent (Google Chat)", () => {
  it("after Google took the message and before it was recorded sent: the repeat under its id is dropped", async () => {
    const space = `spaces/${uniqueId("S")}`;
    const key = `agent:main:googlechat:group:${space.toLowerCase()}`;
    const route = { channel: "googlechat", accountId: "default", to: space };
    const queued = await queueReply(key, route, "Shown once, after the crash.");
    // Not marked before its first send: a repeat is dropped by the platform whatever the row says.
    expect(queued.row).toMatchObject({ state: "pending", attempts: 0 });
    expect(queued.untried).toBe(true);

    // Google stores the message at once and answers late; the object dies meanwhile.
    await scriptGoogle({ api: "create", space, delayMs: 2000 });
    const creates = async () =>
      (await chatCalls("create")).filter((c) => c.path.startsWith(`/v1/${space}/messages`));
    const firstPass = runDurableObjectAlarm(sessionStub(key)).catch(() => undefined);
    await waitFor(async () => ((await creates()).length ? true : undefined));
    await abortAllDurableObjects();
    await firstPass;
    expect(await outboxRow(key, queued.id)).toMatchObject({ state: "pending", attempts: 0 });

    await runInDurableObject(sessionStub(key), (_instance, state) =>
      state.storage.setAlarm(Date.now() + 60_000),
    );
    // The repeat after the crash is counted before it goes: were this isolate to die in the send
    // too, the next one would start from it, and a chunk whose every send dies reaches maxAttempts.
    await scriptGoogle({ api: "create", space, delayMs: 1000 });
    const secondPass = runDurableObjectAlarm(sessionStub(key));
    await waitFor(async () => ((await creates()).length >= 2 ? true : undefined));
    expect(await outboxRow(key, queued.id)).toMatchObject({ state: "sending", attempts: 1 });
    await secondPass;
    await settle(500);
    const [first, second] = await creates();
    expect(second!.path).toBe(first!.path); // the same client message id: Google answers 409
    expect((await chatMessages(space)).map((m) => m.text)).toEqual([
      "Shown once, after the crash.",
    ]);
    expect(await outboxRow(key, queued.id)).toMatchObject({ state: "sent", attempts: 1 });
  });
});
