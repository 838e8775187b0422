import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { uniqueChannel } from "../routing/helpers.ts";

/**
 * The audit trail: security-relevant admin actions and failed-auth lockouts land in Postgres and are
 * listed by GET /admin/audit (gateway token), newest first, with who did what to what.
 */
const TOKEN = "test-gateway-token";

interface Entry {
  id: number;
  action: string;
  actor: string | null;
  target: string | null;
  detail: Record<string, unknown>;
  at: string;
}

function admin(path: string, init: RequestInit & { ip?: string; token?: string } = {}) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${init.token ?? TOKEN}`);
  if (init.ip) headers.set("cf-connecting-ip", init.ip);
  if (init.body) headers.set("content-type", "application/json");
  return SELF.fetch(`https://edgeclaw.test/admin${path}`, { ...init, headers });
}

async function audit(query = ""): Promise<Entry[]> {
  const res = await admin(`/audit${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: Entry[] }).entries;
}

describe("audit trail", () => {
  it("refuses a listing without the gateway token", async () => {
    expect((await SELF.fetch("https://edgeclaw.test/admin/audit")).status).toBe(401);
    expect((await admin("/audit?limit=0")).status).toBe(400);
  });

  it("records allowlist changes with their actor, newest first", async () => {
    const channel = uniqueChannel();
    const ip = "198.51.100.77";
    expect(
      (
        await admin(`/allowlist/${channel}`, {
          method: "POST",
          body: JSON.stringify({ senderId: "U-AUDIT" }),
          ip,
        })
      ).status,
    ).toBe(201);
    expect((await admin(`/allowlist/${channel}/U-AUDIT`, { method: "DELETE", ip })).status).toBe(
      200,
    );
    const mine = (await audit("?limit=200")).filter((entry) => entry.detail.channel === channel);
    expect(mine.map((entry) => entry.action)).toEqual(["allowlist.removed", "allowlist.added"]);
    expect(mine.every((entry) => entry.actor === ip)).toBe(true);
    expect(mine[0]!.id).toBeGreaterThan(mine[1]!.id);
    const onlyRemovals = await audit("?action=allowlist.removed&limit=1000");
    expect(onlyRemovals.every((entry) => entry.action === "allowlist.removed")).toBe(true);
  });

  it("records a failed-auth lockout once, with the client's address and no credential", async () => {
    const octet = () => Math.floor(Math.random() * 250) + 1;
    const ip = `198.18.${octet()}.${octet()}`;
    const guesses = Array.from({ length: 10 }, (_, i) => `wrong-guess-${crypto.randomUUID()}-${i}`);
    for (const guess of guesses)
      expect((await admin("/agents", { ip, token: guess })).status).toBe(401);
    expect((await admin("/agents", { ip })).status).toBe(429);
    let lockouts: Entry[] = [];
    for (let i = 0; i < 100 && lockouts.length === 0; i++) {
      lockouts = (await audit("?action=auth.lockout&limit=1000")).filter(
        (entry) => entry.actor === ip,
      );
      if (!lockouts.length) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(lockouts).toHaveLength(1);
    expect(lockouts[0]).toMatchObject({
      action: "auth.lockout",
      target: "gateway",
      detail: { failures: 10, path: "/admin/agents" },
    });
    const raw = JSON.stringify(lockouts);
    for (const guess of guesses) expect(raw).not.toContain(guess);
  });
});
