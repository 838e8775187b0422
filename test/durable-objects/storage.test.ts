import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import {
  pruneSessionStorage,
  pruneStores,
  type RetentionPolicy,
} from "../../durable-objects/session/upkeep/retention.ts";

const archived = (activeSessionId: string): RetentionPolicy => ({
  activeSessionId,
  archived: true,
  deadLetterMs: 30 * 86_400_000,
  maxEntries: 500,
  archiveMs: 30 * 86_400_000,
});
import { sessionStub, webchatEvent } from "./helpers.ts";

describe("SessionDO storage bounds", () => {
  it("drops transcript rows only once they are archived in Postgres and out of the model's context", async () => {
    await runInDurableObject(sessionStub("agent:main:storage-prune"), async (_instance, state) => {
      const store = new SessionStore(state.storage.sql);
      const old = store.transcript.append("old-session", null, { role: "user", content: "old" }, 1);
      const compacted = store.transcript.append(
        "live",
        null,
        { role: "user", content: "summarised" },
        2,
      );
      const kept = store.transcript.append("live", null, { role: "user", content: "recent" }, 3);
      const unarchived = store.transcript.append(
        "old-session",
        null,
        { role: "user", content: "not yet mirrored" },
        4,
      );
      store.transcript.markCompacted("live", kept);
      store.transcript.markMirrored(kept);
      // The store that mirrored sweeps: what a pass copied is known in its memory (and carried by
      // the next run's end), not stored by the pass.
      pruneStores(store, archived("live"), 10);
      const left = [...store.transcript.recent("live"), ...store.transcript.recent("old-session")]
        .map((row) => row.seq)
        .sort();
      expect(left).toEqual([kept, unarchived].sort());
      expect([old, compacted].some((seq) => left.includes(seq))).toBe(false);
    });
  });

  it("forgets dedup tombstones only after the retry window", async () => {
    await runInDurableObject(
      sessionStub("agent:main:storage-tombstones"),
      async (_instance, state) => {
        const store = new SessionStore(state.storage.sql);
        const event = webchatEvent("agent:main:storage-tombstones", "hi", "tomb-1");
        const seq = store.inbox.insert(event, 0)!;
        store.inbox.settle(seq, "answer", 1_000);
        pruneSessionStorage(state.storage.sql, archived("live"), 1_000 + 47 * 60 * 60 * 1000);
        expect(store.inbox.insert(event, 2_000)).toBeNull();
        pruneSessionStorage(state.storage.sql, archived("live"), 1_000 + 49 * 60 * 60 * 1000);
        expect(store.inbox.insert(event, 3_000)).not.toBeNull();
      },
    );
  });
});
