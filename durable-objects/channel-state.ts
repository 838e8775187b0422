import { DurableObject } from "cloudflare:workers";
import {
  CHANNEL_STATE_LIMITS,
  type ChannelStateEntry,
  type ChannelStateReply,
  type ChannelStateStore,
} from "../functions/channels/channel-state.ts";
import { migrate, type SchemaMigration, type VersionedSchema } from "./lib/migrate.ts";
import type { Env } from "./env.ts";
import type { ChannelStateRpc } from "./rpc.ts";

/**
 * ChannelStateDO's one table, versioned by the shared migrator (lib/migrate.ts): append a step to
 * change it. This class is CommandRegistryDO renamed (wrangler.toml v11, `renamed_classes`), so an
 * object may hold that class's `commands` table at its version 1 (recorded as "CommandRegistryDO");
 * step 2 moves those rows into table "commands" of `entries`, one JSON value per command, and drops
 * the old table. On an object that never had it, the step creates it empty first and moves nothing.
 */
const CHANNEL_STATE_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    why: "one key/value table per channel-declared table name",
    statements: [
      `CREATE TABLE IF NOT EXISTS entries (tbl TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (tbl, key))`,
    ],
  },
  {
    version: 2,
    why: "move the rows CommandRegistryDO kept in its commands table into table commands",
    statements: [
      `CREATE TABLE IF NOT EXISTS commands (team_id TEXT NOT NULL, trigger TEXT NOT NULL, command_id TEXT NOT NULL, token TEXT NOT NULL, callback_url TEXT NOT NULL, bot_user_id TEXT NOT NULL, registered_at INTEGER NOT NULL, PRIMARY KEY (team_id, trigger))`,
      `INSERT OR REPLACE INTO entries (tbl, key, value) SELECT 'commands', team_id || '/' || trigger, json_object('teamId', team_id, 'trigger', trigger, 'commandId', command_id, 'token', token, 'callbackUrl', callback_url, 'botUserId', bot_user_id, 'registeredAt', registered_at) FROM commands`,
      `DROP TABLE commands`,
      `CREATE TABLE IF NOT EXISTS schema_versions (name TEXT PRIMARY KEY, version INTEGER NOT NULL)`,
      `DELETE FROM schema_versions WHERE name = 'CommandRegistryDO'`,
    ],
  },
];

export const CHANNEL_STATE_SCHEMA: VersionedSchema = {
  name: "ChannelStateDO",
  migrations: CHANNEL_STATE_MIGRATIONS,
};

/**
 * The state of one channel account (`<channel>:<accountId>`): the tables its channel declares
 * (functions/channels/channel-state.ts `stateTable`), each a key → JSON value map. Its one job:
 * keep those rows, bounded (CHANNEL_STATE_LIMITS), and answer for them. It knows no channel: the
 * channel's table schema checks every row on the way in and out. A refused call changes nothing.
 */
export class ChannelStateDO
  extends DurableObject<Env>
  implements ChannelStateStore, ChannelStateRpc
{
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(ctx.storage, CHANNEL_STATE_SCHEMA);
  }

  async get(table: string, key: string): Promise<ChannelStateReply<unknown | null>> {
    return answer(() => {
      checkTable(table);
      checkKey(key);
      const row = this.sql
        .exec<{ value: string }>("SELECT value FROM entries WHERE tbl = ? AND key = ?", table, key)
        .toArray()[0];
      return row ? JSON.parse(row.value) : null;
    });
  }

  async list(table: string): Promise<ChannelStateReply<ChannelStateEntry[]>> {
    return answer(() => {
      checkTable(table);
      return this.sql
        .exec<{ key: string; value: string }>(
          "SELECT key, value FROM entries WHERE tbl = ? ORDER BY key LIMIT ?",
          table,
          CHANNEL_STATE_LIMITS.maxRowsPerTable,
        )
        .toArray()
        .map((row) => ({ key: row.key, value: JSON.parse(row.value) }));
    });
  }

  async put(table: string, key: string, value: unknown): Promise<ChannelStateReply<null>> {
    return answer(() => {
      checkTable(table);
      checkKey(key);
      const json = encoded(value);
      this.ctx.storage.transactionSync(() => {
        const known = this.sql
          .exec("SELECT 1 FROM entries WHERE tbl = ? AND key = ?", table, key)
          .toArray().length;
        if (!known && this.rows(table) >= CHANNEL_STATE_LIMITS.maxRowsPerTable)
          throw new Refusal(
            `channel-state table ${table} is full (${CHANNEL_STATE_LIMITS.maxRowsPerTable} rows)`,
          );
        this.sql.exec(
          "INSERT INTO entries (tbl, key, value) VALUES (?, ?, ?) ON CONFLICT (tbl, key) DO UPDATE SET value = excluded.value",
          table,
          key,
          json,
        );
      });
      return null;
    });
  }

  async delete(table: string, key: string): Promise<ChannelStateReply<boolean>> {
    return answer(() => {
      checkTable(table);
      checkKey(key);
      return (
        this.sql.exec("DELETE FROM entries WHERE tbl = ? AND key = ?", table, key).rowsWritten > 0
      );
    });
  }

  async replace(table: string, entries: ChannelStateEntry[]): Promise<ChannelStateReply<null>> {
    return answer(() => {
      checkTable(table);
      if (!Array.isArray(entries) || entries.length > CHANNEL_STATE_LIMITS.maxRowsPerTable)
        throw new Refusal(
          `channel-state: ${entries?.length} rows for table ${table}, at most ${CHANNEL_STATE_LIMITS.maxRowsPerTable}`,
        );
      // Every row is checked before anything is written: a refused replace leaves the table as it was.
      const rows = entries.map((entry) => {
        checkKey(entry.key);
        return [entry.key, encoded(entry.value)] as const;
      });
      this.ctx.storage.transactionSync(() => {
        this.sql.exec("DELETE FROM entries WHERE tbl = ?", table);
        for (const [key, json] of rows)
          this.sql.exec(
            "INSERT OR REPLACE INTO entries (tbl, key, value) VALUES (?, ?, ?)",
            table,
            key,
            json,
          );
      });
      return null;
    });
  }

  private rows(table: string): number {
    return (
      this.sql
        .exec<{ n: number }>("SELECT COUNT(*) AS n FROM entries WHERE tbl = ?", table)
        .toArray()[0]?.n ?? 0
    );
  }
}

/** Why a call was refused: answered as `{ ok: false, refused }`, never thrown across RPC. */
class Refusal extends Error {}

function answer<T>(work: () => T): ChannelStateReply<T> {
  try {
    return { ok: true, value: work() };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, refused: error.message };
    throw error;
  }
}

function checkTable(table: string): void {
  if (typeof table !== "string" || !CHANNEL_STATE_LIMITS.tableName.test(table))
    throw new Refusal(`channel-state: table name ${JSON.stringify(table)} is not a-z0-9_`);
}

function checkKey(key: string): void {
  if (typeof key !== "string" || key.length === 0 || key.length > CHANNEL_STATE_LIMITS.maxKeyChars)
    throw new Refusal(
      `channel-state: a key must be 1–${CHANNEL_STATE_LIMITS.maxKeyChars} characters`,
    );
}

function encoded(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) throw new Refusal("channel-state: the value is not JSON");
  const bytes = new TextEncoder().encode(json).byteLength;
  if (bytes > CHANNEL_STATE_LIMITS.maxValueBytes)
    throw new Refusal(
      `channel-state: a value of ${bytes} bytes, at most ${CHANNEL_STATE_LIMITS.maxValueBytes}`,
    );
  return json;
}
