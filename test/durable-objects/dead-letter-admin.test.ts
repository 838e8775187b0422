import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { slackMessages, waitFor } from "../channels/slack/helpers.ts";
import { sessionStub } from "./helpers.ts";

/**
 * The operator's retry and discard of dead letters, on a real SessionDO whose outbox sends to the
 * fake Slack Web API. Dead rows are planted as the outbox leaves them (state "dead", the reason it
 * records), then acted on through the object's RPCs, which is what the admin API calls.
 */
function slackRoute(to: string) {
  return { channel: "slack", accountId: "ops", to };
}

async function plantDead(
  key: string,
  id: string,
  to: string,
  text: string,
  lastError: string,
  options: { sendFirst?: boolean } = {},
) {
  const stub = sessionStub(key);
  await runInDurableObject(stub, (_instance, state) => {
    const store = new SessionStore(state.storage);
    store.meta.set("sessionKey", key);
    store.outbox.insert(
      { id, runId: null, route: slackRoute(to), text, chunkIndex: 0, chunkCount: 1 },
      Date.now(),
    );
    if (!options.sendFirst)
      store.outbox.update(id, { state: "dead", attempts: 1, lastError }, Date.now());
  });
  return stub;
}

async function markDead(key: string, id: string, lastError: string) {
  await runInDurableObject(sessionStub(key), (_instance, state) =>
    new SessionStore(state.storage).outbox.update(
      id,
      { state: "dead", attempts: 1, lastError },
      Date.now(),
    ),
  );
}

function newDm(): string {
  return `D${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
}

describe("dead letters: operator retry and discard", () => {
  it("a retried dead reply chunk goes through the outbox again under its id and is delivered once", async () => {
    const key = `agent:main:dead-retry-${crypto.randomUUID()}`;
    const dm = newDm();
    const stub = await plantDead(
      key,
      "run:r1:0",
      dm,
      "the answer that bounced",
      "slack: channel_not_found",
    );
    expect(await stub.deadLetters()).toEqual([
      expect.objectContaining({
        kind: "reply",
        id: "run:r1:0",
        channel: "slack",
        to: dm,
        text: "the answer that bounced",
        error: "slack: channel_not_found",
        retryable: true,
      }),
    ]);

    expect(await stub.retryDeadLetter("run:r1:0")).toEqual({
      ok: true,
      kind: "reply",
      id: "run:r1:0",
      state: "pending",
    });
    const posted = await waitFor(async () => {
      const messages = await slackMessages(dm);
      return messages.length ? messages : undefined;
    }, 10_000);
    expect(posted.map((m) => m.text)).toEqual(["the answer that bounced"]);
    expect(await stub.deadLetters()).toEqual([]);
    const row = await runInDurableObject(stub, (_i, state) =>
      new SessionStore(state.storage).outbox.rows().find((r) => r.id === "run:r1:0"),
    );
    expect(row).toMatchObject({ state: "sent" });

    // A second retry finds nothing dead: no second post.
    expect(await stub.retryDeadLetter("run:r1:0")).toMatchObject({ ok: false, status: 404 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await slackMessages(dm)).map((m) => m.text)).toEqual(["the answer that bounced"]);
  });

  it("retrying a chunk that died with its outcome unknown reconciles first: it had landed, so nothing is posted again", async () => {
    const key = `agent:main:dead-unknown-${crypto.randomUUID()}`;
    const dm = newDm();
    // The chunk really reached Slack (sent by the outbox), then is marked as the outbox marks a
    // chunk whose answer was lost: dead with its outcome unknown.
    const stub = await plantDead(key, "run:r2:0", dm, "already delivered once", "", {
      sendFirst: true,
    });
    await stub.retryDeadLetter("nothing"); // arms the alarm: the pending chunk is sent
    await waitFor(async () => ((await slackMessages(dm)).length ? true : undefined), 10_000);
    await waitFor(
      async () =>
        (await runInDurableObject(
          stub,
          (_i, state) =>
            new SessionStore(state.storage).outbox.rows().find((r) => r.id === "run:r2:0")?.state,
        )) === "sent"
          ? true
          : undefined,
      10_000,
    );
    await markDead(key, "run:r2:0", "outcome unknown after 3 attempts: socket hang up");

    expect(await stub.retryDeadLetter("run:r2:0")).toEqual({
      ok: true,
      kind: "reply",
      id: "run:r2:0",
      state: "unknown",
    });
    await waitFor(
      async () =>
        (await runInDurableObject(
          stub,
          (_i, state) =>
            new SessionStore(state.storage).outbox.rows().find((r) => r.id === "run:r2:0")?.state,
        )) === "sent"
          ? true
          : undefined,
      10_000,
    );
    expect((await slackMessages(dm)).map((m) => m.text)).toEqual(["already delivered once"]);
  });

  it("discard removes a dead reply; an unknown id is 404 and changes nothing", async () => {
    const key = `agent:main:dead-discard-${crypto.randomUUID()}`;
    const dm = newDm();
    const stub = await plantDead(key, "run:r3:0", dm, "gone", "slack: not_in_channel");
    expect(await stub.discardDeadLetter("run:r3:1")).toMatchObject({ ok: false, status: 404 });
    expect(await stub.deadLetters()).toHaveLength(1);
    expect(await stub.discardDeadLetter("run:r3:0")).toEqual({
      ok: true,
      kind: "reply",
      id: "run:r3:0",
      state: "discarded",
    });
    expect(await stub.deadLetters()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await slackMessages(dm)).toEqual([]);
  });

  it("shows no configured secret in a dead letter's text or reason", async () => {
    const key = `agent:main:dead-secret-${crypto.randomUUID()}`;
    // test-anthropic-key is the fake provider's configured apiKey (test-config.ts).
    const stub = await plantDead(
      key,
      "run:r4:0",
      newDm(),
      "my key is test-anthropic-key ok",
      "provider said: bad key test-anthropic-key",
    );
    const [letter] = await stub.deadLetters();
    expect(JSON.stringify(letter)).not.toContain("test-anthropic-key");
    expect(letter!.text).toContain("my key is");
  });
});
