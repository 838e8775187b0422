import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { withDb } from "../functions/db/client.ts";

describe("health", () => {
  it("answers live", async () => {
    const res = await SELF.fetch("https://edgeclaw.test/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, status: "live" });
  });

  it("reaches Postgres through the Neon driver", async () => {
    const rows = await withDb(env, (db) => db.execute(sql`select to_regclass('public.sessions')::text as name`));
    expect(rows.rows[0]).toEqual({ name: "sessions" });
  });
});
