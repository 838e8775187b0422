import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { CHANNEL_STATE_SCHEMA } from "../../durable-objects/channel-state.ts";
import { migrate } from "../../durable-objects/lib/migrate.ts";
import {
  CHANNEL_STATE_LIMITS,
  channelState,
  openStateTable,
  stateTable,
} from "../../functions/channels/channel-state.ts";

/**
 * The generic channel-state object (durable-objects/channel-state.ts): one per channel account,
 * the tables a channel declares, typed by the table's schema, bounded, and — since the class is
 * CommandRegistryDO renamed — the rows that class kept moved into table "commands".
 */
const note = z.object({ id: z.string(), text: z.string(), at: z.number() });
const notes = stateTable<z.infer<typeof note>>({
  name: "notes",
  schema: note,
  key: (row) => row.id,
});

let account = 0;
function freshStore() {
  const store = channelState(env as never, "testchan", `state-${++account}-${Date.now()}`);
  if (!store) throw new Error("the test Worker has no CHANNEL_STATE binding");
  return store;
}

describe("channel-state object", () => {
  it("keeps a declared table's rows, typed, per channel account", async () => {
    const store = freshStore();
    const table = openStateTable(store, notes);
    await table.put({ id: "b", text: "second", at: 2 });
    await table.put({ id: "a", text: "first", at: 1 });
    await table.put({ id: "b", text: "second, edited", at: 3 });
    expect(await table.get("b")).toEqual({ id: "b", text: "second, edited", at: 3 });
    expect((await table.list()).map((row) => row.id)).toEqual(["a", "b"]);
    expect(await table.delete("a")).toBe(true);
    expect(await table.delete("a")).toBe(false);
    expect(await table.get("a")).toBeNull();
    // Another account of the same channel is another object: it sees none of it.
    expect(await openStateTable(freshStore(), notes).list()).toEqual([]);
  });

  it("replaces a table whole, leaving the object's other tables alone", async () => {
    const store = freshStore();
    const table = openStateTable(store, notes);
    await store.put("other", "k", { kept: true });
    await table.replace([
      { id: "x", text: "x", at: 1 },
      { id: "y", text: "y", at: 2 },
    ]);
    await table.replace([{ id: "z", text: "z", at: 3 }]);
    expect((await table.list()).map((row) => row.id)).toEqual(["z"]);
    expect(await store.get("other", "k")).toEqual({ ok: true, value: { kept: true } });
  });

  it("refuses a bad table name, key, oversized value or oversized replace, and changes nothing", async () => {
    const store = freshStore();
    const refused = (reason: RegExp) => ({ ok: false, refused: expect.stringMatching(reason) });
    expect(await store.put("notes", "keep", { id: "keep", text: "kept", at: 0 })).toEqual({
      ok: true,
      value: null,
    });
    expect(await store.put("Bad-Name", "k", 1)).toEqual(refused(/table name/));
    expect(await store.put("notes", "", 1)).toEqual(refused(/key must be/));
    expect(await store.put("notes", "k".repeat(CHANNEL_STATE_LIMITS.maxKeyChars + 1), 1)).toEqual(
      refused(/key must be/),
    );
    expect(await store.put("notes", "big", "x".repeat(CHANNEL_STATE_LIMITS.maxValueBytes))).toEqual(
      refused(/bytes, at most/),
    );
    const tooMany = Array.from({ length: CHANNEL_STATE_LIMITS.maxRowsPerTable + 1 }, (_, i) => ({
      key: `k${i}`,
      value: i,
    }));
    expect(await store.replace("notes", tooMany)).toEqual(refused(/at most/));
    // One bad row refuses the whole replace before anything is deleted.
    expect(
      await store.replace("notes", [
        { key: "ok", value: 1 },
        { key: "", value: 2 },
      ]),
    ).toEqual(refused(/key must be/));
    expect(await store.list("notes")).toEqual({
      ok: true,
      value: [{ key: "keep", value: { id: "keep", text: "kept", at: 0 } }],
    });
    // The typed table turns a refusal into an error for its caller.
    await expect(
      openStateTable(store, notes).put({ id: "", text: "no key", at: 1 }),
    ).rejects.toThrow(/key must be/);
  });

  it("refuses to hand out a row its table's schema does not accept", async () => {
    const store = freshStore();
    await store.put("notes", "n", { id: "n", text: 42 });
    await expect(openStateTable(store, notes).get("n")).rejects.toThrow(
      /table notes holds a row its schema refuses/,
    );
  });

  it("moves what CommandRegistryDO kept into table commands, once", async () => {
    const store = freshStore();
    const stub = store as unknown as DurableObjectStub;
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      // The object as CommandRegistryDO left it: its table at its version 1, nothing else.
      sql.exec("DROP TABLE entries");
      sql.exec("DELETE FROM schema_versions");
      sql.exec(
        `CREATE TABLE commands (team_id TEXT NOT NULL, trigger TEXT NOT NULL, command_id TEXT NOT NULL, token TEXT NOT NULL, callback_url TEXT NOT NULL, bot_user_id TEXT NOT NULL, registered_at INTEGER NOT NULL, PRIMARY KEY (team_id, trigger))`,
      );
      sql.exec(
        `INSERT INTO commands VALUES ('team1', 'oc_status', 'cmd1', 'tok1', 'https://gw.test/cb', 'bot1', 1000), ('team1', 'oc_new', 'cmd2', 'tok2', 'https://gw.test/cb', 'bot1', 1001)`,
      );
      sql.exec(`INSERT INTO schema_versions(name, version) VALUES ('CommandRegistryDO', 1)`);
      expect(migrate(state.storage, CHANNEL_STATE_SCHEMA)).toBe(2);
      expect(migrate(state.storage, CHANNEL_STATE_SCHEMA)).toBe(2);
      const tables = sql
        .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table'`)
        .toArray()
        .map((row) => row.name);
      expect(tables).not.toContain("commands");
      expect(sql.exec("SELECT name, version FROM schema_versions ORDER BY name").toArray()).toEqual(
        [{ name: "ChannelStateDO", version: 2 }],
      );
    });
    expect((await store.get("commands", "team1/oc_status")).ok).toBe(true);
    const table = openStateTable(
      store,
      stateTable({ name: "commands", schema: z.unknown(), key: String }),
    );
    expect(await table.get("team1/oc_status")).toEqual({
      teamId: "team1",
      trigger: "oc_status",
      commandId: "cmd1",
      token: "tok1",
      callbackUrl: "https://gw.test/cb",
      botUserId: "bot1",
      registeredAt: 1000,
    });
    const listed = await store.list("commands");
    expect(listed.ok ? listed.value.map((entry) => entry.key) : listed).toEqual([
      "team1/oc_new",
      "team1/oc_status",
    ]);
  });
});
