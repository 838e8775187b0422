import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { withDb } from "../functions/db/client.ts";

describe("health", () => {
  it("answers live", async () => {
    const res = await SELF.fetch("https://edgeclaw.test/health");
    expect(res.status).toBe(200);
    // The test config has a polling Telegram account, so the companion's deployments are reported too.
    expect(await res.json()).toMatchObject({
      ok: true,
      status: "live",
      companion: { deployments: expect.any(Array) },
    });
  });

  it("reaches Postgres through the Neon driver", async () => {
    const rows = await withDb(env, (db) =>
      db.execute(sql`select to_regclass('public.sessions')::text as name`),
    );
    expect(rows.rows[0]).toEqual({ name: "sessions" });
  });
});
