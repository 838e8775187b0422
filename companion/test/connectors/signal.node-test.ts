import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ConnectorAccount } from "../../src/connector.ts";
import { OutboundRejectedError, type OutboundCommand } from "../../src/outbound.ts";
import { signalConnector } from "../../../functions/channels/signal/companion/connector.ts";
import {
  startFakeSignalDaemon,
  type FakeSignalDaemon,
} from "../../../functions/channels/signal/simulate/signal-daemon.ts";
import { FAKE_SIGNAL_BOT } from "../../../functions/channels/signal/simulate/signal-world.ts";
import { MemoryContext, until } from "./memory-context.ts";

/**
 * The Signal connector against the fake signal-cli daemon (JSON-RPC over HTTP on loopback): what
 * it forwards and when it asks for more (only after the Worker stored the batch), resuming after
 * a restart, sends answered with signal-cli's timestamp and never repeated, typing and read
 * receipts, reactions forwarded raw, and a daemon that does not serve the account.
 */

const BOT = FAKE_SIGNAL_BOT.number;
const ALICE = "+15550001111";

type Forwarded = {
  envelope: {
    sourceNumber: string;
    timestamp: number;
    dataMessage?: { message?: string; reaction?: { emoji: string } };
  };
  self: { number: string; uuid?: string };
  attachmentText: Record<string, string>;
};

describe("Signal connector", () => {
  let fake: FakeSignalDaemon;
  before(async () => (fake = await startFakeSignalDaemon()));
  after(async () => fake.stop());

  const control = (path: string, body: unknown) =>
    fetch(`${fake.url}/_control/${path}`, { method: "POST", body: JSON.stringify(body) }).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
  const say = async (text: string, extra: Record<string, unknown> = {}) =>
    Number((await control("message", { from: ALICE, text, ...extra })).timestamp);
  const account = (settings: Record<string, unknown> = {}): ConnectorAccount => ({
    channel: "signal",
    accountId: "default",
    label: "Signal",
    settings: {
      number: BOT,
      uuid: FAKE_SIGNAL_BOT.uuid,
      url: fake.url,
      managed: null,
      ...settings,
    },
    secretEnv: {},
  });
  const forwarded = (ctx: MemoryContext) => ctx.stored.map((e) => e.payload as Forwarded);
  const backoff = { initialMs: 50, maxMs: 100, stableMs: 60_000 };

  async function started(settings: Record<string, unknown> = {}) {
    const ctx = new MemoryContext(account(settings));
    const connector = signalConnector(ctx.account, { pollSeconds: 0.2, backoff });
    await connector.start(ctx);
    await until(() => ctx.state_ === "ready" || undefined, 5_000, "ready");
    return { ctx, connector };
  }

  const command = (
    fields: Partial<OutboundCommand> & Pick<OutboundCommand, "op">,
  ): OutboundCommand => ({
    v: 1,
    commandId: `cmd-${Math.random().toString(36).slice(2)}`,
    channel: "signal",
    accountId: "default",
    target: { conversationId: ALICE },
    payload: {},
    ...fields,
  });

  it("forwards a user's message raw with the bot's identity, and asks for more only after the Worker stored the batch", async () => {
    const { ctx, connector } = await started();
    ctx.hold();
    const sent = await say("hello bot");
    await until(() => fake.world.delivered >= 1 || undefined, 5_000, "received");
    const receivesBefore = Number(
      (await (await fetch(`${fake.url}/_control/state`)).json()).receives,
    );
    const later = await say("said while the Worker had not answered");
    await new Promise((resolve) => setTimeout(resolve, 600));
    const state = (await (await fetch(`${fake.url}/_control/state`)).json()) as {
      receives: number;
      pending: number;
    };
    assert.equal(state.receives, receivesBefore, "no receive while the batch is not stored");
    assert.equal(state.pending, 1, "the later message waits in signal-cli");
    ctx.release();
    await until(() => ctx.stored.length >= 2 || undefined, 5_000, "both forwarded");
    assert.deepEqual(
      ctx.stored.map((e) => e.eventId),
      [`${ALICE}:${sent}`, `${ALICE}:${later}`],
    );
    const first = forwarded(ctx)[0]!;
    assert.equal(first.envelope.dataMessage?.message, "hello bot");
    assert.deepEqual(first.self, { number: BOT, uuid: FAKE_SIGNAL_BOT.uuid });
    await connector.stop("shutdown");
  });

  it("resumes after a restart: what arrived while it was down is received then, once", async () => {
    const first = await started();
    await first.connector.stop("shutdown");
    const sent = await say("while the companion was down");
    const second = await started();
    await until(() => second.ctx.stored.length >= 1 || undefined, 5_000, "received after restart");
    assert.deepEqual(
      second.ctx.stored.map((e) => e.eventId),
      [`${ALICE}:${sent}`],
    );
    assert.equal(first.ctx.stored.length, 0);
    await second.connector.stop("shutdown");
  });

  it("forwards a reaction raw, reads a small text attachment's content, and skips receipts and typing", async () => {
    const { ctx, connector } = await started();
    await control("item", {
      account: BOT,
      item: {
        account: BOT,
        envelope: {
          sourceNumber: ALICE,
          timestamp: 5,
          typingMessage: { action: "STARTED", timestamp: 5 },
        },
      },
    });
    await say("", {
      reaction: { emoji: "👍", targetAuthorNumber: BOT, targetSentTimestamp: 1234 },
    });
    const notes = Buffer.from("line one\nline two").toString("base64");
    await say("see file", {
      attachments: [
        { id: "att-note", contentType: "text/plain", filename: "notes.txt", data: notes },
      ],
    });
    await until(() => ctx.stored.length >= 2 || undefined, 5_000, "forwarded");
    const [reaction, file] = forwarded(ctx);
    assert.equal(reaction!.envelope.dataMessage?.reaction?.emoji, "👍");
    assert.deepEqual(file!.attachmentText, { "att-note": "line one\nline two" });
    assert.equal(ctx.stored.length, 2, "the typing envelope is not forwarded");
    await connector.stop("shutdown");
  });

  it("sends with signal-cli's timestamp as the message id, answers a retried command from its record, and never repeats a send whose answer was lost", async () => {
    const { ctx, connector } = await started();
    const reply = command({
      op: "send",
      target: { conversationId: ALICE, replyToId: "1700000000000" },
      payload: { text: "hi there", quoteAuthor: ALICE },
    });
    const receipt = await connector.send(reply);
    const sent = fake.world.messagesTo(ALICE);
    assert.equal(sent.length, 1);
    assert.equal(receipt.platformMessageIds[0], String(sent[0]!.timestamp));
    assert.deepEqual(sent[0]!.params, {
      recipient: [ALICE],
      message: "hi there",
      quoteTimestamp: 1700000000000,
      quoteAuthor: ALICE,
    });
    const again = await connector.send(reply);
    assert.deepEqual(again.platformMessageIds, receipt.platformMessageIds);
    assert.equal(fake.world.messagesTo(ALICE).length, 1, "answered from the journal");

    await control("script", { method: "send", action: "dropAfter" });
    const lost = command({ op: "send", payload: { text: "answer lost" } });
    await assert.rejects(
      connector.send(lost),
      (e) => e instanceof OutboundRejectedError && e.code === "outcome_unknown",
    );
    await assert.rejects(
      connector.send(lost),
      (e) => e instanceof OutboundRejectedError && e.code === "outcome_unknown",
    );
    assert.equal(fake.world.messagesTo(ALICE).length, 2, "sent once, never again");

    await control("script", { method: "send", action: "dropBefore" });
    const refusedConnection = command({ op: "send", payload: { text: "try again" } });
    await assert.rejects(
      connector.send(refusedConnection),
      (e) => e instanceof OutboundRejectedError,
    );
    // dropBefore cuts an accepted connection before anything is done: to the client that is a
    // lost answer too (it cannot know), so it is not repeated either.
    assert.equal(fake.world.messagesTo(ALICE).length, 2);

    await control("config", { unregistered: ["+15559999999"] });
    await assert.rejects(
      connector.send(
        command({ op: "send", target: { conversationId: "+15559999999" }, payload: { text: "x" } }),
      ),
      (e) => e instanceof OutboundRejectedError && e.code === "unregistered",
    );
    const retried = command({
      op: "send",
      target: { conversationId: "+15559999999" },
      payload: { text: "x" },
    });
    await assert.rejects(connector.send(retried));
    assert.equal(
      ctx.values.get(`cmd:${retried.commandId}`),
      undefined,
      "a refused send leaves no pending mark",
    );
    await connector.stop("shutdown");
  });

  it("sends typing, read receipts and reactions as signal-cli's sendTyping, sendReceipt and sendReaction", async () => {
    const { connector } = await started();
    await fetch(`${fake.url}/_control/group`, {
      method: "POST",
      body: JSON.stringify({ groupId: "R3JvdXA=", name: "G" }),
    });
    await connector.send(
      command({
        op: "typing",
        target: { conversationId: "group:R3JvdXA=" },
        payload: { stop: false },
      }),
    );
    await connector.send(
      command({ op: "markRead", target: { conversationId: ALICE, messageId: "1700000000001" } }),
    );
    const reacted = await connector.send(
      command({
        op: "react",
        target: { conversationId: ALICE, messageId: "1700000000002" },
        payload: { emoji: "✅", targetAuthor: ALICE },
      }),
    );
    const calls = fake.world.sent.filter((c) => c.at > 0).slice(-3);
    assert.deepEqual(
      calls.map((c) => [c.method, c.params]),
      [
        ["sendTyping", { groupId: "R3JvdXA=", stop: false }],
        ["sendReceipt", { recipient: ALICE, targetTimestamp: [1700000000001], type: "read" }],
        [
          "sendReaction",
          {
            recipient: [ALICE],
            emoji: "✅",
            targetAuthor: ALICE,
            targetTimestamp: 1700000000002,
            remove: false,
          },
        ],
      ],
    );
    assert.equal(reacted.platformMessageIds[0], String(calls[2]!.timestamp));
    await connector.stop("shutdown");
  });

  it("stops with a clear status when the daemon does not serve the account, or receives on its own", async () => {
    const wrong = new MemoryContext(account({ number: "+15557770000" }));
    const connector = signalConnector(wrong.account, { pollSeconds: 0.2, backoff });
    await connector.start(wrong);
    await until(() => wrong.state_ === "fatal" || undefined, 5_000, "fatal");
    assert.match(
      wrong.statuses.at(-1)!.lastError!,
      /has no account \+15557770000 .*serves \+15550000001/,
    );
    await connector.stop("shutdown");

    await control("config", { receiveMode: "on-start" });
    try {
      const auto = new MemoryContext(account());
      const second = signalConnector(auto.account, { pollSeconds: 0.2, backoff });
      await second.start(auto);
      await until(() => auto.state_ === "fatal" || undefined, 5_000, "fatal");
      assert.match(auto.statuses.at(-1)!.lastError!, /--receive-mode manual/);
      await second.stop("shutdown");
    } finally {
      await control("config", { receiveMode: "manual" });
    }
  });

  it("talks to a single-account daemon (-a) without the account parameter", async () => {
    await control("config", { singleAccount: true });
    try {
      const { ctx, connector } = await started();
      const sent = await say("single account");
      await until(() => ctx.stored.length >= 1 || undefined, 5_000, "forwarded");
      assert.equal(ctx.stored[0]!.eventId, `${ALICE}:${sent}`);
      await connector.send(command({ op: "send", payload: { text: "ok" } }));
      assert.equal(fake.world.sent.at(-1)!.params.account, undefined);
      await connector.stop("shutdown");
    } finally {
      await control("config", { singleAccount: false });
    }
  });

  it("backs off while the daemon is unreachable, with the reason in the status", async () => {
    const ctx = new MemoryContext(account({ url: "http://127.0.0.1:9" }));
    const connector = signalConnector(ctx.account, { pollSeconds: 0.2, backoff });
    await connector.start(ctx);
    await until(() => ctx.state_ === "backoff" || undefined, 5_000, "backoff");
    assert.match(ctx.statuses.at(-1)!.lastError!, /does not answer \/api\/v1\/check/);
    await connector.stop("shutdown");
  });
});
