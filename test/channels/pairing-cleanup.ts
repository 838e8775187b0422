import { env } from "cloudflare:test";
import { gte } from "drizzle-orm";
import { afterAll, beforeAll } from "vitest";
import { withDb } from "../../functions/db/client.ts";
import { pairingRequests } from "../../functions/db/schema.ts";
import type { Env } from "../../workers/env.ts";

/**
 * A channel account holds at most three pending pairing requests, and every test file of a shard
 * shares one Postgres. A file whose strangers meet pairing only in passing (ingress, refusal tests)
 * would otherwise leave requests behind that take a later file's stranger over the cap, so that
 * stranger gets no pairing code. Files run one at a time within a shard (scripts/test.ts), so what
 * was created since this file began is this file's own.
 */
let fileStartedAt = new Date();

beforeAll(() => {
  fileStartedAt = new Date();
});

afterAll(async () => {
  await withDb(env as unknown as Env, (db) =>
    db.delete(pairingRequests).where(gte(pairingRequests.createdAt, fileStartedAt)),
  );
});
