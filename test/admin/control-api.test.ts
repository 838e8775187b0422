import { env, runInDurableObject, SELF } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { withDb } from "../../functions/db/client.ts";
import { auditEvents, modelCalls, sessions } from "../../functions/db/schema.ts";
import { postgresAccessStore } from "../../functions/routing/access-store-postgres.ts";
import type { Env } from "../../workers/env.ts";
import { slackMessages, waitFor } from "../channels/slack/helpers.ts";
import { sessionStub } from "../durable-objects/helpers.ts";
import { callWorker, configJson } from "../openai/scripted-sessions.ts";

/**
 * The admin endpoints the control page reads and acts through: refused without the gateway token,
 * 400 (and nothing changed) on bad input, and the right answer on real rows in Postgres and in a
 * SessionDO.
 */
const BASE = "https://edgeclaw.test/admin";
const auth = { authorization: "Bearer test-gateway-token" };
const db = <T>(work: Parameters<typeof withDb<T>>[1]) => withDb(env as unknown as Env, work);

function post(path: string, body: unknown, headers: Record<string, string> = auth) {
  return SELF.fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A dead reply chunk in a session, and the audit row the outbox writes when it gives up. */
async function plantDeadReply(sessionKey: string, id: string, to: string, text: string) {
  await runInDurableObject(sessionStub(sessionKey), (_instance, state) => {
    const store = new SessionStore(state.storage);
    store.meta.set("sessionKey", sessionKey);
    store.outbox.insert(
      {
        id,
        runId: null,
        route: { channel: "slack", accountId: "ops", to },
        text,
        chunkIndex: 0,
        chunkCount: 1,
      },
      Date.now(),
    );
    store.outbox.update(
      id,
      { state: "dead", attempts: 1, lastError: "slack: channel_not_found" },
      Date.now(),
    );
  });
  await db((d) =>
    d.insert(auditEvents).values({
      kind: "outbox.dead_letter",
      detail: { sessionKey, outboxId: id, channel: "slack", reason: "slack: channel_not_found" },
    }),
  );
}

describe("admin API for the control page", () => {
  it("refuses every new endpoint without the gateway token, and with a wrong one", async () => {
    const gets = [
      "/pairing",
      "/channels/status",
      "/spend",
      "/config/report",
      "/dead-letters",
      "/sessions?q=x",
    ];
    for (const path of gets) {
      expect((await SELF.fetch(`${BASE}${path}`)).status, path).toBe(401);
      expect(
        (await SELF.fetch(`${BASE}${path}`, { headers: { authorization: "Bearer wrong" } })).status,
        path,
      ).toBe(401);
    }
    for (const path of ["/dead-letters/retry", "/dead-letters/discard"]) {
      expect((await post(path, { sessionKey: "k", id: "x" }, {})).status, path).toBe(401);
    }
  });

  it("lists dead letters across sessions, retries one once (audited), and bad input is 400 and changes nothing", async () => {
    const key = `agent:main:control-dead-${crypto.randomUUID()}`;
    const dm = `D${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
    await plantDeadReply(key, "run:c1:0", dm, "bounced reply");

    const listed = (await (
      await SELF.fetch(`${BASE}/dead-letters?limit=100`, { headers: auth })
    ).json()) as { sessions: Array<{ sessionKey: string; deadLetters: Array<{ id: string }> }> };
    expect(listed.sessions.find((s) => s.sessionKey === key)?.deadLetters.map((d) => d.id)).toEqual(
      ["run:c1:0"],
    );

    for (const bad of [
      "not json",
      {},
      { sessionKey: key },
      { sessionKey: key, id: "run:c1:0", extra: 1 },
      { sessionKey: "", id: "run:c1:0" },
    ]) {
      expect((await post("/dead-letters/retry", bad)).status, JSON.stringify(bad)).toBe(400);
      expect((await post("/dead-letters/discard", bad)).status, JSON.stringify(bad)).toBe(400);
    }
    expect((await post("/dead-letters/retry", { sessionKey: key, id: "run:nope:0" })).status).toBe(
      404,
    );
    expect((await sessionStub(key).deadLetters()).map((d) => d.id)).toEqual(["run:c1:0"]);
    expect(await slackMessages(dm)).toEqual([]);

    const retried = await post("/dead-letters/retry", { sessionKey: key, id: "run:c1:0" });
    expect(retried.status).toBe(200);
    expect(await retried.json()).toMatchObject({ ok: true, kind: "reply", state: "pending" });
    await waitFor(async () => ((await slackMessages(dm)).length ? true : undefined), 10_000);
    expect((await post("/dead-letters/retry", { sessionKey: key, id: "run:c1:0" })).status).toBe(
      404,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await slackMessages(dm)).map((m) => m.text)).toEqual(["bounced reply"]);
    const audited = await db((d) =>
      d.execute<{ kind: string }>(
        sql`select kind from audit_events where target = ${key} order by id`,
      ),
    );
    expect(audited.rows.map((r) => r.kind)).toEqual(["dead_letter.retry"]);
  });

  it("searches sessions by key fragment, channel and sender id; LIKE wildcards are literal; an over-long query is 400", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const now = new Date();
    await db((d) =>
      d.insert(sessions).values([
        {
          sessionKey: `agent:main:slack:direct:u${tag}`,
          sessionId: "s1",
          agentId: "main",
          channel: "slack",
          lastRoute: { channel: "slack", to: `D${tag}`, extra: { senderId: `USENDER${tag}` } },
          sessionStartedAt: now,
        },
        {
          sessionKey: `agent:main:line:direct:other${tag}`,
          sessionId: "s2",
          agentId: "main",
          channel: "line",
          lastRoute: { channel: "line", to: `Uline${tag}` },
          sessionStartedAt: now,
        },
      ]),
    );
    const search = async (q: string) =>
      (
        (await (
          await SELF.fetch(`${BASE}/sessions?limit=1000&q=${encodeURIComponent(q)}`, {
            headers: auth,
          })
        ).json()) as { sessions: Array<{ sessionKey: string }> }
      ).sessions
        .map((s) => s.sessionKey)
        .filter((k) => k.includes(tag));
    expect(await search(`direct:u${tag}`)).toEqual([`agent:main:slack:direct:u${tag}`]);
    expect(await search(`usender${tag}`)).toEqual([`agent:main:slack:direct:u${tag}`]);
    expect(await search(`Uline${tag}`)).toEqual([`agent:main:line:direct:other${tag}`]);
    expect((await search("line")).length).toBeGreaterThanOrEqual(1);
    expect(await search(`%${tag}`)).toEqual([]);
    expect(
      (await SELF.fetch(`${BASE}/sessions?q=${"x".repeat(201)}`, { headers: auth })).status,
    ).toBe(400);
  });

  it("sums spend per day, agent and channel from the metered model calls; a bad days value is 400", async () => {
    const agentId = `ctl${crypto.randomUUID().slice(0, 8)}`;
    const at = new Date();
    const call = (id: string, channel: string, costUsd: number) => ({
      id: `${agentId}-${id}`,
      sessionKey: `agent:${agentId}:x`,
      sessionId: "s",
      agentId,
      channel,
      kind: "turn",
      provider: "fake",
      model: "m",
      inputTokens: 100,
      outputTokens: 10,
      costUsd,
      createdAt: at,
    });
    await db((d) =>
      d
        .insert(modelCalls)
        .values([call("a", "slack", 0.25), call("b", "slack", 0.5), call("c", "line", 1)]),
    );
    const body = (await (await SELF.fetch(`${BASE}/spend?days=2`, { headers: auth })).json()) as {
      rows: Array<{
        agentId: string;
        channel: string;
        usd: number;
        tokens: number;
        calls: number;
        day: string;
      }>;
    };
    const mine = body.rows
      .filter((r) => r.agentId === agentId)
      .sort((a, b) => a.channel.localeCompare(b.channel));
    const day = at.toISOString().slice(0, 10);
    expect(mine).toEqual([
      { day, agentId, channel: "line", usd: 1, tokens: 110, calls: 1 },
      { day, agentId, channel: "slack", usd: 0.75, tokens: 220, calls: 2 },
    ]);
    for (const days of ["0", "abc", "9999"])
      expect((await SELF.fetch(`${BASE}/spend?days=${days}`, { headers: auth })).status, days).toBe(
        400,
      );
  });

  it("channel status: the webhook URL to paste, the last event, the last failure with secrets masked", async () => {
    const lastEvent = new Date(Date.now() + 3_600_000); // later than any other test's LINE session
    await db((d) =>
      d.insert(sessions).values({
        sessionKey: `agent:main:line:ctl-${crypto.randomUUID()}`,
        sessionId: "s",
        agentId: "main",
        channel: "line",
        lastRoute: { channel: "line", accountId: "default", to: "U1" },
        sessionStartedAt: new Date(),
        lastInteractionAt: lastEvent,
      }),
    );
    await db((d) =>
      d.insert(auditEvents).values({
        kind: "outbox.dead_letter",
        detail: {
          sessionKey: "k",
          channel: "line",
          reason: "line said: bad token line-token-default",
        },
      }),
    );
    const body = (await (
      await SELF.fetch(`${BASE}/channels/status`, { headers: auth })
    ).json()) as {
      channels: Array<{
        channel: string;
        accountId: string;
        webhookUrl: string | null;
        lastEventAt: string | null;
        lastError: { reason: string } | null;
      }>;
    };
    const slackOps = body.channels.find((c) => c.channel === "slack" && c.accountId === "ops");
    expect(slackOps?.webhookUrl).toMatch(/^https:\/\/edgeclaw\.test\/\S+/);
    const line = body.channels.find((c) => c.channel === "line" && c.accountId === "default");
    expect(line?.lastEventAt).toBe(lastEvent.toISOString());
    expect(line?.lastError?.reason).toContain("line said: bad token");
    expect(JSON.stringify(body)).not.toContain("line-token-default");
  });

  it("config report: which secrets the config needs and whether each is set, never a value; channels enabled", async () => {
    const config = configJson({
      channels: {
        line: {
          enabled: true,
          channelAccessToken: { source: "env", id: "CTL_MISSING_TOKEN" },
          channelSecret: { source: "env", id: "LINE_CHANNEL_SECRET" },
        },
      },
    });
    const response = await callWorker(new Request(`${BASE}/config/report`, { headers: auth }), {
      EDGECLAW_CONFIG: config,
    });
    const text = await response.text();
    const report = JSON.parse(text) as {
      ok: boolean;
      secrets: Array<{ name: string; present: boolean }>;
      channels: Array<{ channel: string; enabled: boolean; webhookPath: string | null }>;
    };
    expect(report.ok).toBe(true);
    expect(report.secrets).toEqual(
      expect.arrayContaining([
        { name: "CTL_MISSING_TOKEN", why: "channels.line: channel access token", present: false },
        expect.objectContaining({ name: "LINE_CHANNEL_SECRET", present: true }),
      ]),
    );
    expect(report.channels).toEqual([
      expect.objectContaining({ channel: "line", accountId: "default", enabled: true }),
    ]);
    for (const [name, value] of Object.entries(env as unknown as Record<string, unknown>)) {
      if (typeof value === "string" && /TOKEN|SECRET|PASSWORD|KEY/.test(name) && value.length >= 6)
        expect(text, name).not.toContain(value);
    }
  });

  it("config report: a channel block with no credentials names its env fallbacks as missing secrets (Discord's DISCORD_BOT_TOKEN), per account", async () => {
    const config = configJson({
      channels: {
        discord: {},
        line: { channelSecret: { source: "env", id: "LINE_CHANNEL_SECRET" } },
      },
    });
    // The test Worker has every fallback set; this one lacks two of them.
    const response = await callWorker(new Request(`${BASE}/config/report`, { headers: auth }), {
      EDGECLAW_CONFIG: config,
      DISCORD_BOT_TOKEN: "",
      LINE_CHANNEL_ACCESS_TOKEN: "",
    } as Partial<Env>);
    const report = (await response.json()) as {
      warnings: string[];
      secrets: Array<{ name: string; present: boolean }>;
      channels: Array<{ channel: string; accountId: string; missing: string[] }>;
    };
    expect(report.secrets).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "DISCORD_BOT_TOKEN", present: false }),
        expect.objectContaining({ name: "LINE_CHANNEL_SECRET", present: true }),
        expect.objectContaining({ name: "LINE_CHANNEL_ACCESS_TOKEN", present: false }),
      ]),
    );
    expect(report.channels).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          channel: "discord",
          accountId: "default",
          missing: ["DISCORD_BOT_TOKEN"],
        }),
        expect.objectContaining({
          channel: "line",
          accountId: "default",
          missing: ["LINE_CHANNEL_ACCESS_TOKEN"],
        }),
      ]),
    );
    expect(report.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^channels\.discord: no bot token \(DISCORD_BOT_TOKEN is not set/),
      ]),
    );
  });

  it("lists pending pairing requests of every configured channel", async () => {
    const senderId = `UCTL${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
    // An account of its own, so this request never counts against another test's pending cap.
    const accountId = `ctl${crypto.randomUUID().slice(0, 8)}`;
    const code = `C${crypto.randomUUID().slice(0, 7).toUpperCase()}`;
    await db((d) =>
      postgresAccessStore(d).createPairingRequest({
        channel: "slack",
        accountId,
        senderId,
        now: Date.now(),
        ttlMs: 60_000,
        maxPending: 3,
        generateCode: () => code,
      }),
    );
    try {
      const body = (await (await SELF.fetch(`${BASE}/pairing`, { headers: auth })).json()) as {
        requests: Array<{ channel: string; senderId: string; code: string }>;
      };
      expect(body.requests.filter((r) => r.senderId === senderId)).toEqual([
        expect.objectContaining({ channel: "slack", senderId, code }),
      ]);
    } finally {
      await db((d) => postgresAccessStore(d).takePairingRequest("slack", code, Date.now()));
    }
  });
});
