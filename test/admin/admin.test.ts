import { env, SELF } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { withDb } from "../../functions/db/client.ts";
import { decideAccess } from "../../functions/routing/access.ts";
import { postgresAccessStore } from "../../functions/routing/access-store-postgres.ts";
import { envelope, uniqueChannel } from "../routing/helpers.ts";

const BASE = "https://edgeclaw.test/admin";
const TOKEN = "test-gateway-token";

function call(path: string, init: RequestInit & { ip?: string } = {}) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${TOKEN}`);
  if (init.ip) headers.set("cf-connecting-ip", init.ip);
  if (init.body) headers.set("content-type", "application/json");
  return SELF.fetch(`${BASE}${path}`, { ...init, headers });
}

async function pendingCode(channel: string, senderId: string): Promise<string> {
  const decision = await withDb(env, (db) =>
    decideAccess({
      config: parseConfig({}),
      envelope: envelope({ channel, senderId }),
      store: postgresAccessStore(db),
      now: Date.now(),
    }),
  );
  if (decision.kind !== "pairing") throw new Error("expected a pairing code");
  return /Pairing code: (\S+)/.exec(decision.replyText)![1]!;
}

function uniqueIp() {
  return `203.0.113.${Math.floor(Math.random() * 250) + 1}-${crypto.randomUUID().slice(0, 6)}`;
}

describe("admin auth", () => {
  it("refuses requests without the gateway token", async () => {
    const res = await SELF.fetch(`${BASE}/agents`);
    expect(res.status).toBe(401);
    const wrong = await SELF.fetch(`${BASE}/agents`, { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
  });
});

describe("pairing through the admin API", () => {
  it("lists, approves (granting DM access and setting the first owner) and rejects", async () => {
    const channel = uniqueChannel();
    const code = await pendingCode(channel, "U1");
    const second = await pendingCode(channel, "U2");

    const list = await call(`/pairing/${channel}`);
    expect(list.status).toBe(200);
    const body = (await list.json()) as { requests: Array<{ code: string; senderId: string }> };
    expect(body.requests.map((r) => r.senderId).sort()).toEqual(["U1", "U2"]);

    const approve = await call(`/pairing/${channel}/approve`, {
      method: "POST",
      body: JSON.stringify({ code }),
      ip: uniqueIp(),
    });
    expect(approve.status).toBe(200);
    expect(await approve.json()).toMatchObject({ ok: true, senderId: "U1", accountId: "default" });

    const allowed = await withDb(env, (db) =>
      decideAccess({
        config: parseConfig({}),
        envelope: envelope({ channel, senderId: "U1" }),
        store: postgresAccessStore(db),
        now: Date.now(),
      }),
    );
    expect(allowed.kind).toBe("allow");

    const reject = await call(`/pairing/${channel}/reject`, {
      method: "POST",
      body: JSON.stringify({ code: second }),
      ip: uniqueIp(),
    });
    expect(reject.status).toBe(200);
    const after = (await (await call(`/pairing/${channel}`)).json()) as { requests: unknown[] };
    expect(after.requests).toEqual([]);

    const again = await call(`/pairing/${channel}/approve`, {
      method: "POST",
      body: JSON.stringify({ code }),
      ip: uniqueIp(),
    });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { message: string } }).error.message).toMatch(
      /no pending pairing request/,
    );

    const entries = (await (await call(`/allowlist/${channel}`)).json()) as {
      entries: Array<{ senderId: string; source: string }>;
    };
    expect(entries.entries).toEqual([
      expect.objectContaining({ senderId: "U1", source: "pairing" }),
    ]);
  });

  it("rate-limits repeated wrong codes and writes them to the audit trail", async () => {
    const channel = uniqueChannel();
    const code = await pendingCode(channel, "U1");
    const ip = uniqueIp();
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await call(`/pairing/${channel}/approve`, {
        method: "POST",
        body: JSON.stringify({ code: "ZZZZZZZZ" }),
        ip,
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 9).every((s) => s === 404)).toBe(true);
    expect(statuses[9]).toBe(429);
    // Even the right code is refused while locked out.
    const locked = await call(`/pairing/${channel}/approve`, {
      method: "POST",
      body: JSON.stringify({ code }),
      ip,
    });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another caller is not affected.
    const other = await call(`/pairing/${channel}/approve`, {
      method: "POST",
      body: JSON.stringify({ code }),
      ip: uniqueIp(),
    });
    expect(other.status).toBe(200);

    const audit = await withDb(env, (db) =>
      db.execute(
        sql`select kind, count(*)::int as n from audit_events where actor = ${ip} group by kind order by kind`,
      ),
    );
    expect(audit.rows).toEqual([
      { kind: "pairing.approve.failed", n: 10 },
      { kind: "pairing.approve.locked", n: 1 },
      { kind: "pairing.approve.rate_limited", n: 1 },
    ]);
  });

  it("rejects malformed bodies and channel ids with clear reasons", async () => {
    const bad = await call(`/pairing/slack/approve`, {
      method: "POST",
      body: "not json",
      ip: uniqueIp(),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/JSON/);
    const badChannel = await call(`/pairing/${encodeURIComponent("no way")}`);
    expect(badChannel.status).toBe(400);
  });
});

describe("allowlist, sessions, agents, config", () => {
  it("adds and removes allowlist entries", async () => {
    const channel = uniqueChannel();
    expect(
      (
        await call(`/allowlist/${channel}`, {
          method: "POST",
          body: JSON.stringify({ senderId: "U9", accountId: "work" }),
        })
      ).status,
    ).toBe(201);
    const listed = (await (await call(`/allowlist/${channel}?account=work`)).json()) as {
      entries: Array<{ senderId: string; source: string }>;
    };
    expect(listed.entries).toEqual([expect.objectContaining({ senderId: "U9", source: "admin" })]);
    expect((await call(`/allowlist/${channel}/U9?account=work`, { method: "DELETE" })).status).toBe(
      200,
    );
    expect((await call(`/allowlist/${channel}/U9?account=work`, { method: "DELETE" })).status).toBe(
      404,
    );
  });

  it("lists sessions and shows a transcript from Postgres", async () => {
    const key = `agent:main:${uniqueChannel()}:direct:u1`;
    await withDb(env, async (db) => {
      await db.execute(sql`insert into sessions (session_key, session_id, agent_id, channel, chat_type, session_started_at, updated_at)
        values (${key}, 'sid-1', 'main', 'slack', 'direct', now(), now() + interval '1 day')`);
      await db.execute(sql`insert into transcript_entries (session_key, session_id, seq, role, content, created_at)
        values (${key}, 'sid-1', 1, 'user', '"hello"'::jsonb, now()), (${key}, 'sid-1', 2, 'assistant', '"hi!"'::jsonb, now())`);
    });
    const list = (await (await call(`/sessions?limit=5`)).json()) as {
      sessions: Array<{ sessionKey: string }>;
    };
    expect(list.sessions[0]?.sessionKey).toBe(key);
    const shown = await call(`/sessions/${encodeURIComponent(key)}`);
    expect(shown.status).toBe(200);
    const body = (await shown.json()) as {
      session: { sessionId: string };
      transcript: Array<{ role: string; content: unknown }>;
    };
    expect(body.session.sessionId).toBe("sid-1");
    expect(body.transcript.map((e) => [e.role, e.content])).toEqual([
      ["user", "hello"],
      ["assistant", "hi!"],
    ]);
    expect((await call(`/sessions/${encodeURIComponent("agent:main:nope")}`)).status).toBe(404);
    expect(
      (await call(`/sessions/${encodeURIComponent("agent:main:nope")}/reset`, { method: "POST" }))
        .status,
    ).toBe(404);
  });

  it("checks the config as written when it is the bundled one (no EDGECLAW_CONFIG), as npm run dev runs", async () => {
    // `npx edgeclaw config check` against dev said INVALID (companion.ingressKeys.0.channels: Too
    // small) for no file, the example file and a channels-only file: it re-checked the parsed config.
    const { admin } = await import("../../workers/admin.ts");
    const bundled = { ...env, EDGECLAW_CONFIG: undefined, EDGECLAW_GATEWAY_TOKEN: TOKEN };
    const res = await admin.request(
      "/config/check",
      { headers: { authorization: `Bearer ${TOKEN}` } },
      bundled,
    );
    expect(res.status).toBe(200);
    const report = (await res.json()) as { ok: boolean; errors: string[] };
    expect(report.errors).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it("lists agents and checks config", async () => {
    const agents = (await (await call(`/agents`)).json()) as {
      agents: Array<{ id: string; default: boolean }>;
    };
    expect(agents.agents.some((a) => a.default)).toBe(true);

    const ok = (await (await call(`/config/check`)).json()) as { ok: boolean };
    expect(ok.ok).toBe(true);
    const bad = await call(`/config/check`, {
      method: "POST",
      body: JSON.stringify({
        channels: { mychan: { dmPolicy: "open", allowFrom: ["U1"] } },
        bindings: [{ agentId: "ghost", match: { channel: "slack" } }],
      }),
    });
    const report = (await bad.json()) as { ok: boolean; errors: string[]; warnings: string[] };
    expect(report.ok).toBe(false);
    expect(report.errors.join("\n")).toMatch(
      /channels\.mychan\.allowFrom: dmPolicy "open" requires "\*"/,
    );
    // A channel neither OpenClaw nor the companion's ingress keys know is a typo.
    expect(report.errors).toContain("channels.mychan: unknown key");
    expect(report.warnings.join("\n")).toMatch(/ghost/);
  });

  it("answers unknown admin routes with a JSON 404", async () => {
    const res = await call(`/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: "not_found" } });
  });
});
