import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../workers/env.ts";
import { TEST_MATTERMOST } from "../../functions/channels/mattermost/test-fixtures.ts";
import { scriptMattermost } from "../channels/mattermost/helpers.ts";

/**
 * Changes to what the gateway does, made through the admin API, leave an audit row each: who (the
 * caller's address), what (action and target), when — and nothing secret. Cron jobs (create,
 * update, delete, run now), `/admin/system/event`, and Mattermost's native slash-command
 * registration, which changes what users can run on the platform.
 */

const TOKEN = "test-gateway-token";
const testEnv = env as unknown as Env;

interface Entry {
  id: number;
  action: string;
  actor: string | null;
  target: string | null;
  detail: Record<string, unknown>;
  at: string;
}

function octet(): number {
  return Math.floor(Math.random() * 250) + 1;
}

/** A caller address of its own per test, so its rows are told apart from every other test's. */
function uniqueAddress(): string {
  return `203.0.${octet()}.${octet()}`;
}

function admin(path: string, ip: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${TOKEN}`);
  headers.set("cf-connecting-ip", ip);
  if (init.body) headers.set("content-type", "application/json");
  return SELF.fetch(`https://edgeclaw.test/admin${path}`, { ...init, headers });
}

/** This caller's rows, oldest first. */
async function rowsBy(ip: string): Promise<Entry[]> {
  const res = await admin("/audit?limit=500", ip);
  expect(res.status).toBe(200);
  const { entries } = (await res.json()) as { entries: Entry[] };
  return entries.filter((entry) => entry.actor === ip).reverse();
}

function expectRecent(entry: Entry, since: number): void {
  const at = Date.parse(entry.at);
  expect(at).toBeGreaterThanOrEqual(since - 1_000);
  expect(at).toBeLessThanOrEqual(Date.now() + 1_000);
}

describe("admin changes are audited", () => {
  it("cron create, update, run now and delete: one row each, with the job's id and never its text", async () => {
    const ip = uniqueAddress();
    const since = Date.now();
    const secretText = `remind me of the vault code ${crypto.randomUUID()}`;
    const add = await admin("/cron", ip, {
      method: "POST",
      body: JSON.stringify({
        name: "audited",
        schedule: { kind: "cron", expr: "0 6 * * 1" },
        payload: { kind: "systemEvent", text: secretText },
      }),
    });
    expect(add.status, await add.clone().text()).toBe(201);
    const { job } = (await add.json()) as { job: { id: string } };
    const patch = await admin(`/cron/${job.id}`, ip, {
      method: "PATCH",
      body: JSON.stringify({ enabled: false, payload: { kind: "systemEvent", text: secretText } }),
    });
    expect(patch.status, await patch.clone().text()).toBe(200);
    const run = await admin(`/cron/${job.id}/run`, ip, { method: "POST" });
    expect(run.status, await run.clone().text()).toBe(202);
    const { runId } = (await run.json()) as { runId: string };
    expect((await admin(`/cron/${job.id}`, ip, { method: "DELETE" })).status).toBe(200);
    // A refused change (no such job) changes nothing and records nothing.
    expect((await admin(`/cron/${job.id}`, ip, { method: "DELETE" })).status).toBe(404);

    const rows = await rowsBy(ip);
    expect(rows.map((row) => [row.action, row.target])).toEqual([
      ["cron.created", job.id],
      ["cron.updated", job.id],
      ["cron.run", job.id],
      ["cron.deleted", job.id],
    ]);
    expect(rows[0]!.detail).toMatchObject({
      agentId: "main",
      name: "audited",
      enabled: true,
      payloadKind: "systemEvent",
      schedule: { kind: "cron", expr: "0 6 * * 1" },
    });
    expect(rows[1]!.detail).toMatchObject({
      changed: ["enabled", "payload"],
      job: { enabled: false },
    });
    expect(rows[2]!.detail).toEqual({ runId });
    for (const row of rows) {
      expectRecent(row, since);
      expect(JSON.stringify(row)).not.toContain(secretText);
    }
  });

  it("/admin/system/event: the session it went to and how long the text was, not the text", async () => {
    const ip = uniqueAddress();
    const since = Date.now();
    const text = `the deploy key is ${crypto.randomUUID()}`;
    const res = await admin("/system/event", ip, {
      method: "POST",
      body: JSON.stringify({ text }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const { sessionKey } = (await res.json()) as { sessionKey: string };
    expect((await admin("/system/event", ip, { method: "POST", body: "{}" })).status).toBe(400);

    const rows = await rowsBy(ip);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "system.event",
      target: sessionKey,
      detail: { agentId: "main", mode: "next-heartbeat", textChars: text.length },
    });
    expect(rows[0]!.detail.eventId).toMatch(/^system:/);
    expectRecent(rows[0]!, since);
    expect(JSON.stringify(rows[0])).not.toContain(text);
  });

  it("Mattermost command registration, done or refused: the outcome per team and trigger, never a token", async () => {
    const ip = uniqueAddress();
    const since = Date.now();
    const register = () =>
      admin("/channels/mattermost/commands", ip, {
        method: "POST",
        body: JSON.stringify({
          accountId: "team",
          callbackUrl:
            "https://edgeclaw.test/api/channels/mattermost/command/team?key=operator-secret",
        }),
      });
    const done = await register();
    expect(done.status, await done.clone().text()).toBe(200);
    const fake = String(testEnv.FAKE_MATTERMOST_URL);
    // The next registration is refused by Mattermost at its first call.
    await scriptMattermost({ method: "GET", path: "/users/me", times: 1, status: 403 });
    const refused = await register();
    expect(refused.status, await refused.clone().text()).toBe(502);

    const rows = await rowsBy(ip);
    expect(rows.map((row) => [row.action, row.target])).toEqual([
      ["mattermost.commands_registered", "mattermost:team"],
      ["mattermost.commands_register_failed", "mattermost:team"],
    ]);
    const callback = "https://edgeclaw.test/api/channels/mattermost/command/team";
    expect(rows[0]!.detail).toMatchObject({ accountId: "team", callback });
    const results = rows[0]!.detail.results as Array<{ trigger: string; outcome: string }>;
    expect(results.map((r) => r.trigger)).toContain("oc_status");
    expect(rows[1]!.detail).toMatchObject({ accountId: "team", callback });
    expect(String(rows[1]!.detail.reason)).toMatch(/users\/me/);

    const issued = (await (await fetch(`${fake}/_control/commands`)).json()) as Array<{
      token: string;
    }>;
    expect(issued.length).toBeGreaterThan(0);
    for (const row of rows) {
      expectRecent(row, since);
      const text = JSON.stringify(row);
      for (const { token } of issued) expect(text).not.toContain(token);
      expect(text).not.toContain(TEST_MATTERMOST.botToken);
      expect(text).not.toContain("operator-secret");
    }
  });
});
