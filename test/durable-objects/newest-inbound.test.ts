import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NewestInbound } from "../../durable-objects/session/inbox/newest-inbound.ts";
import { PAYLOAD_MS } from "../../durable-objects/session/inbox/store.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { sessionStub } from "./helpers.ts";

/**
 * The last inbound message is read from the inbox for every message triage sees (the idle reset),
 * so a read must not walk every row since that message each time (inbox/newest-inbound.ts): in a
 * mention-gated group most rows are never accepted. Against a real Durable Object's SQLite, with
 * the rows read counted from each cursor, as they are billed.
 */

const route = (to: string) => ({ channel: "slack", accountId: "plain", to });

/** The object's SQL, with every cursor's rows read added up. */
function counted(sql: SqlStorage) {
  const reads = { rows: 0 };
  const wrapped = {
    exec: (query: string, ...bindings: unknown[]) => {
      const cursor = sql.exec(query, ...bindings);
      const rows = cursor.toArray();
      reads.rows += cursor.rowsRead;
      return { toArray: () => rows, one: () => rows[0] };
    },
  } as unknown as SqlStorage;
  return { sql: wrapped, reads };
}

/** An inbox row: accepted (`userAt`) or not, in a state, its payload kept. */
function insertRow(
  sql: SqlStorage,
  seq: number,
  opts: { accepted: boolean; state: string; to?: string },
) {
  const decision = opts.accepted ? { action: "queue", userAt: 1_000 + seq } : { action: "drop" };
  sql.exec(
    `INSERT INTO inbox(seq, dedup_key, event, state, received_at, settled_at, decision)
       VALUES(?, ?, ?, ?, ?, ?, ?)`,
    seq,
    `test:${seq}`,
    JSON.stringify({ envelope: { route: route(opts.to ?? `C${seq}`) } }),
    opts.state,
    Date.now(),
    opts.state === "settled" ? Date.now() : null,
    opts.state === "new" ? null : JSON.stringify(decision),
  );
}

const afterMicrotasks = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("the last inbound message's read (newest-inbound.ts)", () => {
  it("reads the rows since the last read, not every row since the last accepted message", async () => {
    await runInDurableObject(
      sessionStub(`agent:main:newest-inbound:${crypto.randomUUID()}`),
      async (_i, state) => {
        const raw = state.storage.sql;
        new SessionStore(raw); // the schema
        insertRow(raw, 1, { accepted: true, state: "settled", to: "CFIRST" });
        for (let seq = 2; seq <= 301; seq++)
          insertRow(raw, seq, { accepted: false, state: "settled" });
        const { sql, reads } = counted(raw);
        const reader = new NewestInbound(sql, PAYLOAD_MS);

        expect(reader.newest(0)?.route.to).toBe("CFIRST");
        const firstWalk = reads.rows;
        expect(firstWalk).toBeGreaterThan(300);
        await afterMicrotasks();

        // A group message nobody accepted, then the next read: a few rows, the same answer.
        insertRow(raw, 302, { accepted: false, state: "settled" });
        reads.rows = 0;
        expect(reader.newest(0)?.route.to).toBe("CFIRST");
        expect(reads.rows).toBeLessThan(10);
        await afterMicrotasks();

        // A newer accepted message wins.
        insertRow(raw, 303, { accepted: true, state: "taken", to: "CNEW" });
        reads.rows = 0;
        expect(reader.newest(0)?.route.to).toBe("CNEW");
        expect(reads.rows).toBeLessThan(10);
      },
    );
  });

  it("finds a message triaged right after a read (triage reads before it writes its decision)", async () => {
    await runInDurableObject(
      sessionStub(`agent:main:newest-inbound:${crypto.randomUUID()}`),
      async (_i, state) => {
        const raw = state.storage.sql;
        new SessionStore(raw);
        insertRow(raw, 1, { accepted: true, state: "settled", to: "COLD" });
        insertRow(raw, 2, { accepted: false, state: "new" });
        const reader = new NewestInbound(raw, PAYLOAD_MS);
        // In one synchronous step, as triage does: read, then accept the row it is triaging.
        expect(reader.newest(0)?.route.to).toBe("COLD");
        raw.exec(
          `UPDATE inbox SET state = 'queued', decision = ? WHERE seq = 2`,
          JSON.stringify({ action: "queue", userAt: 5_000 }),
        );
        await afterMicrotasks();
        expect(reader.newest(0)).toMatchObject({ seq: 2, userAt: 5_000 });
      },
    );
  });

  it("a triage decision rolled back leaves its row to be found once it is accepted for real", async () => {
    await runInDurableObject(
      sessionStub(`agent:main:newest-inbound:${crypto.randomUUID()}`),
      async (_i, state) => {
        const raw = state.storage.sql;
        new SessionStore(raw);
        insertRow(raw, 1, { accepted: true, state: "settled", to: "COLD" });
        insertRow(raw, 2, { accepted: false, state: "new" });
        const reader = new NewestInbound(raw, PAYLOAD_MS);
        const accept = () =>
          raw.exec(
            `UPDATE inbox SET state = 'queued', decision = ? WHERE seq = 2`,
            JSON.stringify({ action: "queue", userAt: 7_000 }),
          );
        expect(() =>
          state.storage.transactionSync(() => {
            accept();
            expect(reader.newest(0)?.seq).toBe(2); // inside: the decision is there
            throw new Error("triage failed");
          }),
        ).toThrow("triage failed");
        await afterMicrotasks();
        expect(reader.newest(0)?.route.to).toBe("COLD");
        await afterMicrotasks();
        accept();
        await afterMicrotasks();
        expect(reader.newest(0)).toMatchObject({ seq: 2, userAt: 7_000 });
      },
    );
  });
});
