import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signRequest } from "../../functions/channels/companion/signature.ts";
import type { Env } from "../../workers/env.ts";
import {
  messageUpdate,
  privateChat,
  scriptModel,
  newScenario,
  TEST_TELEGRAM,
  uniqueUserId,
  visibleMessages,
  waitFor,
  settle,
  nextMessageId,
} from "../channels/telegram/helpers.ts";

/**
 * `/internal/companion/*` in workerd: signatures, key limits per channel and account, the lease and
 * its epoch fencing, and the durable accept of raw socket events (Telegram updates of the polling
 * account "poll", parsed by the webhook's own parser).
 */

const TGPOLL = { id: "tgpoll", secret: "test-companion-tgpoll-secret" };
const TGALL = { id: "tgall", secret: "test-companion-tgall-secret" };
const K1 = { id: "k1", secret: "test-companion-secret" };
const BASE = "https://edgeclaw.test";
const testEnv = env as unknown as Env;

async function call(
  method: "GET" | "POST",
  pathWithQuery: string,
  body: unknown,
  key: { id: string; secret: string } = TGPOLL,
  sign: { timestamp?: number } = {},
): Promise<Response> {
  const text = method === "GET" ? "" : JSON.stringify(body);
  const headers = await signRequest(key, {
    method,
    path: pathWithQuery,
    body: new TextEncoder().encode(text),
    timestamp: sign.timestamp ?? Math.floor(Date.now() / 1000),
  });
  return SELF.fetch(`${BASE}${pathWithQuery}`, {
    method,
    headers: { ...headers, ...(method === "POST" ? { "content-type": "application/json" } : {}) },
    ...(method === "POST" ? { body: text } : {}),
  });
}

function pollEvents(updates: Array<{ update_id: number }>, accountId = "poll") {
  return {
    channel: "telegram",
    accountId,
    events: updates.map((update) => ({
      eventId: String(update.update_id),
      payload: update,
      receivedAt: Date.now(),
    })),
  };
}

describe("companion accounts", () => {
  it("lists only the socket accounts the key may run, with the env names of their secrets", async () => {
    const res = await call("GET", "/internal/companion/accounts", undefined);
    expect(res.status).toBe(200);
    const { accounts } = (await res.json()) as { accounts: Array<Record<string, unknown>> };
    expect(accounts).toEqual([
      {
        channel: "telegram",
        accountId: "poll",
        label: "Telegram",
        settings: { apiRoot: expect.any(String), pollTimeoutSeconds: 30 },
        secretEnv: { botToken: "TEST_TELEGRAM_POLL_BOT_TOKEN" },
      },
    ]);
    // A key for other channels sees none of them; the webhook accounts are nobody's socket accounts.
    const k1 = (await (
      await call("GET", "/internal/companion/accounts", undefined, K1)
    ).json()) as { accounts: Array<{ channel: string }> };
    expect(k1.accounts.filter((account) => account.channel === "telegram")).toEqual([]);
    expect(
      (
        (await (await call("GET", "/internal/companion/accounts", undefined, TGALL)).json()) as {
          accounts: unknown[];
        }
      ).accounts,
    ).toHaveLength(1);
  });

  it.each([
    ["a wrong secret", { id: "tgpoll", secret: "nope" }, {}],
    ["a stale timestamp", TGPOLL, { timestamp: Math.floor(Date.now() / 1000) - 301 }],
    ["an unknown key id", { id: "k9", secret: "test-companion-tgpoll-secret" }, {}],
  ])("refuses %s with 401", async (_label, key, sign) => {
    expect((await call("GET", "/internal/companion/accounts", undefined, key, sign)).status).toBe(
      401,
    );
    expect(
      (
        await call(
          "POST",
          "/internal/companion/lease",
          { instanceId: "x", action: "acquire" },
          key,
          sign,
        )
      ).status,
    ).toBe(401);
  });

  it("signs the query too: a state read signed for another key is refused", async () => {
    const headers = await signRequest(TGPOLL, {
      method: "GET",
      path: "/internal/companion/state?channel=telegram&accountId=poll&key=offset",
      body: new Uint8Array(),
      timestamp: Math.floor(Date.now() / 1000),
    });
    const res = await SELF.fetch(
      `${BASE}/internal/companion/state?channel=telegram&accountId=poll&key=other`,
      { headers },
    );
    expect(res.status).toBe(401);
  });
});

describe("companion events", () => {
  it("stores a raw update once: a retried batch reports the duplicate, and the user gets one reply", {
    timeout: 60_000,
  }, async () => {
    const scenario = newScenario("companion-poll");
    await scriptModel(scenario, [{ type: "text", text: "Polled and answered." }]);
    const user = TEST_TELEGRAM.allowed[9]!;
    const messageId = nextMessageId();
    const update = messageUpdate({
      from: { id: user },
      chat: privateChat(user),
      text: `via polling [scenario:${scenario}]`,
      messageId,
    });
    const first = await call("POST", "/internal/companion/events", pollEvents([update]));
    expect(first.status).toBe(200);
    const stored = (await first.json()) as {
      results: Array<{ events: Array<{ sessionKey: string; dedupKey: string }> }>;
    };
    const event = stored.results[0]!.events[0]!;
    expect(stored).toEqual({
      results: [
        {
          eventId: String(update.update_id),
          status: "stored",
          outcomes: ["accepted"],
          events: [
            {
              sessionKey: expect.any(String),
              // A message is keyed by its chat and id (telegram/parse.ts).
              dedupKey: `telegram:bot7000000003:${Number(user)}:${messageId}`,
            },
          ],
        },
      ],
    });
    const retry = await call("POST", "/internal/companion/events", pollEvents([update]));
    expect(await retry.json()).toEqual({
      results: [
        {
          eventId: String(update.update_id),
          status: "stored",
          outcomes: ["duplicate"],
          events: [event],
        },
      ],
    });
    // The answer names where the event is kept, as a webhook's x-edgeclaw-event does: the admin
    // API says what the session decided for it (`edgeclaw simulate` asks there).
    const decision = await SELF.fetch(
      `${BASE}/admin/sessions/${encodeURIComponent(event.sessionKey)}/events/${encodeURIComponent(event.dedupKey)}`,
      { headers: { authorization: "Bearer test-gateway-token" } },
    );
    expect(decision.status).toBe(200);
    expect(await decision.json()).toMatchObject({
      sessionKey: event.sessionKey,
      dedupKey: event.dedupKey,
    });
    // The reply goes out through the Worker's Bot API adapter, with the polling bot's token.
    await waitFor(
      async () =>
        (await visibleMessages(user)).some((m) => m.text === "Polled and answered.")
          ? true
          : undefined,
      45_000,
    );
    await settle(1000);
    expect(
      (await visibleMessages(user)).filter((m) => m.text === "Polled and answered."),
    ).toHaveLength(1);
  });

  it("answers per event: a malformed one is a permanent failure, the others are stored", async () => {
    const good = messageUpdate({
      from: { id: uniqueUserId() },
      chat: privateChat(uniqueUserId()),
      text: "hi",
    });
    const body = {
      channel: "telegram",
      accountId: "poll",
      events: [
        { eventId: "junk", payload: { nope: true }, receivedAt: Date.now() },
        { eventId: String(good.update_id), payload: good, receivedAt: Date.now() },
      ],
    };
    const res = await call("POST", "/internal/companion/events", body);
    const { results } = (await res.json()) as {
      results: Array<{ eventId: string; status: string; permanent?: boolean }>;
    };
    expect(results.map((r) => [r.eventId, r.status, r.permanent ?? false])).toEqual([
      ["junk", "failed", true],
      [String(good.update_id), "stored", false],
    ]);
  });

  it("refuses with 403 a channel or an account the key may not speak for, and stores nothing", async () => {
    const update = messageUpdate({
      from: { id: TEST_TELEGRAM.owner },
      chat: privateChat(TEST_TELEGRAM.owner),
      text: "forged",
    });
    // k1 speaks for testchan/discord/metricschan only; tgpoll for the "poll" account only.
    expect(
      (await call("POST", "/internal/companion/events", pollEvents([update]), K1)).status,
    ).toBe(403);
    expect(
      (await call("POST", "/internal/companion/events", pollEvents([update], "default"))).status,
    ).toBe(403);
    expect(
      (
        await call(
          "POST",
          "/internal/companion/events",
          { ...pollEvents([update]), channel: "webchat" },
          TGALL,
        )
      ).status,
    ).toBe(403);
    // Nothing was stored: the same update, sent by the right key, is new.
    const res = await call("POST", "/internal/companion/events", pollEvents([update]));
    expect(await res.json()).toMatchObject({
      results: [{ status: "stored", outcomes: ["accepted"] }],
    });
  });

  it("answers 404 for an account that is not served over the companion (webhook mode)", async () => {
    const update = messageUpdate({
      from: { id: uniqueUserId() },
      chat: privateChat(uniqueUserId()),
      text: "x",
    });
    expect(
      (await call("POST", "/internal/companion/events", pollEvents([update], "default"), TGALL))
        .status,
    ).toBe(404);
  });

  it("refuses a batch over companion.maxEventsPerRequest with 413 and bad bodies with 400", async () => {
    const updates = Array.from({ length: 101 }, () =>
      messageUpdate({ from: { id: 1 }, chat: privateChat(1), text: "x" }),
    );
    expect((await call("POST", "/internal/companion/events", pollEvents(updates))).status).toBe(
      413,
    );
    expect((await call("POST", "/internal/companion/events", { channel: "telegram" })).status).toBe(
      400,
    );
  });

  it("serves no webhook path for the polling account", async () => {
    const update = messageUpdate({ from: { id: 1 }, chat: privateChat(1), text: "x" });
    const res = await SELF.fetch(`${BASE}/telegram-webhook/poll`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-telegram-bot-api-secret-token": "anything",
      },
      body: JSON.stringify(update),
    });
    expect(res.status).toBe(404);
  });
});

describe("companion lease and state", () => {
  it("lets a second instance wait while the first holds the lease; a stale epoch cannot write", async () => {
    const a = await call("POST", "/internal/companion/lease", {
      instanceId: "instance-a",
      action: "acquire",
    });
    expect(a.status).toBe(200);
    const { epoch, ttlMs } = (await a.json()) as { epoch: number; ttlMs: number };
    expect(ttlMs).toBe(30_000);
    const b = await call("POST", "/internal/companion/lease", {
      instanceId: "instance-b",
      action: "acquire",
    });
    expect(b.status).toBe(409);
    const waiting = (await b.json()) as { holder: string; retryAfterMs: number };
    expect(waiting.holder).toBe("instance-a");
    expect(waiting.retryAfterMs).toBeGreaterThan(0);
    expect(
      (
        await call("POST", "/internal/companion/lease", {
          instanceId: "instance-b",
          action: "renew",
        })
      ).status,
    ).toBe(409);

    const put = (e: number, value: string | null) =>
      call("POST", "/internal/companion/state", {
        epoch: e,
        channel: "telegram",
        accountId: "poll",
        key: "offset",
        value,
      });
    expect((await put(epoch, "41")).status).toBe(200);
    expect(
      await (
        await call(
          "GET",
          "/internal/companion/state?channel=telegram&accountId=poll&key=offset",
          undefined,
        )
      ).json(),
    ).toEqual({ value: "41" });
    expect((await put(epoch + 1, "7")).status).toBe(409); // no such lease yet

    // Released: b takes over with a higher epoch, and a's epoch is now stale.
    expect(
      (
        await call("POST", "/internal/companion/lease", {
          instanceId: "instance-a",
          action: "release",
        })
      ).status,
    ).toBe(200);
    const taken = await call("POST", "/internal/companion/lease", {
      instanceId: "instance-b",
      action: "acquire",
    });
    expect(taken.status).toBe(200);
    const next = ((await taken.json()) as { epoch: number }).epoch;
    expect(next).toBeGreaterThan(epoch);
    const stale = await put(epoch, "99");
    expect(stale.status).toBe(409);
    expect(
      await (
        await call(
          "GET",
          "/internal/companion/state?channel=telegram&accountId=poll&key=offset",
          undefined,
        )
      ).json(),
    ).toEqual({ value: "41" });
    expect((await put(next, "42")).status).toBe(200);
    // State of an account the key does not speak for: 403 either way.
    expect(
      (
        await call("POST", "/internal/companion/state", {
          epoch: next,
          channel: "telegram",
          accountId: "default",
          key: "offset",
          value: "1",
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await call(
          "GET",
          "/internal/companion/state?channel=telegram&accountId=default&key=offset",
          undefined,
        )
      ).status,
    ).toBe(403);
    await call("POST", "/internal/companion/lease", {
      instanceId: "instance-b",
      action: "release",
    });
  });

  it("hands an expired lease to the next instance with a higher epoch (the holder's renew then fails)", async () => {
    const stub = testEnv.COMPANION.get(
      testEnv.COMPANION.idFromName(`expiry-${crypto.randomUUID()}`),
    );
    // 1 s: long enough that the second acquire lands inside it even on a loaded CI machine.
    const first = await stub.lease("old", "acquire", 1000);
    expect(first).toMatchObject({ ok: true, epoch: 1 });
    expect(await stub.lease("new", "acquire", 1000)).toMatchObject({ ok: false, holder: "old" });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await stub.putState(1, "telegram", "poll", "offset", "5")).toBe(false); // lapsed: even the holder may not write
    const second = await stub.lease("new", "acquire", 60_000);
    expect(second).toMatchObject({ ok: true, epoch: 2 });
    expect(await stub.lease("old", "renew", 60_000)).toMatchObject({ ok: false, holder: "new" });
    expect(await stub.putState(1, "telegram", "poll", "offset", "5")).toBe(false);
    expect(await stub.putState(2, "telegram", "poll", "offset", "6")).toBe(true);
  });

  it("keeps the live holder's status report for /admin/companion/status and refuses a stale one", async () => {
    const acquired = (await (
      await call("POST", "/internal/companion/lease", {
        instanceId: "instance-h",
        action: "acquire",
      })
    ).json()) as { epoch: number };
    const report = (epoch: number, instanceId: string) =>
      call("POST", "/internal/companion/status", {
        epoch,
        instanceId,
        connectors: [
          {
            channel: "telegram",
            accountId: "poll",
            state: "ready",
            lastEventAt: 1_700_000_000_000,
          },
        ],
      });
    expect((await report(acquired.epoch, "instance-h")).status).toBe(200);
    expect((await report(acquired.epoch + 1, "instance-h")).status).toBe(409);
    expect((await report(acquired.epoch, "someone-else")).status).toBe(409);
    const health = (await (
      await SELF.fetch(`${BASE}/admin/companion/status`, {
        headers: { authorization: "Bearer test-gateway-token" },
      })
    ).json()) as {
      companion: { deployments?: Array<Record<string, unknown>> };
    };
    // Two keys speak for the polling account here (tgpoll, tgall), so both deployments are listed.
    const tgpoll = health.companion.deployments?.find((d) => d.deployment === "tgpoll");
    expect(health.companion.deployments?.find((d) => d.deployment === "tgall")).toMatchObject({
      instance: null,
    });
    expect(tgpoll).toMatchObject({
      deployment: "tgpoll",
      instance: "instance-h",
      leaseEpoch: acquired.epoch,
      leaseHeld: true,
      connectors: [{ channel: "telegram", accountId: "poll", state: "ready" }],
    });
    await call("POST", "/internal/companion/lease", {
      instanceId: "instance-h",
      action: "release",
    });
  });
});
