import type * as z from "zod";

/**
 * State a channel keeps beside its webhooks (Mattermost's slash-command tokens): the one generic
 * channel-state Durable Object (durable-objects/channel-state.ts), one object per channel account
 * (`<channel>:<accountId>`), holding the tables the channel declares with `stateTable`. A table is
 * a key → JSON value map, checked on the way in and out by the table's zod schema, so a channel
 * gets its own typed records and no channel needs a Durable Object class, a binding or a wrangler
 * migration of its own. Channel code reaches it through the `CHANNEL_STATE` binding in `env` by the
 * narrow shape below, so nothing here imports a Durable Object class.
 */

/** What the object enforces on every call: a bad name, key or value is refused with this reason. */
export const CHANNEL_STATE_LIMITS = {
  /** Table names: lower case, digits and `_`, starting with a letter. */
  tableName: /^[a-z][a-z0-9_]{0,63}$/,
  maxKeyChars: 512,
  /** One value, as JSON. */
  maxValueBytes: 64 * 1024,
  /** Rows one `replace` may write, and rows one table may hold. */
  maxRowsPerTable: 10_000,
} as const;

export interface ChannelStateEntry {
  key: string;
  value: unknown;
}

/**
 * What the object answers: the value, or why it refused the call (a bad table name, key or value,
 * a full table), having changed nothing. A refusal is an answer, not a thrown error, so it crosses
 * the RPC boundary as data; the typed table (openStateTable) turns it into an Error for its caller.
 */
export type ChannelStateReply<T> = { ok: true; value: T } | { ok: false; refused: string };

/** The object's RPC surface (durable-objects/rpc.ts ChannelStateRpc is this, branded). */
export interface ChannelStateStore {
  get(table: string, key: string): Promise<ChannelStateReply<unknown | null>>;
  /** Every row of the table, in key order. */
  list(table: string): Promise<ChannelStateReply<ChannelStateEntry[]>>;
  put(table: string, key: string, value: unknown): Promise<ChannelStateReply<null>>;
  /** Whether there was such a row. */
  delete(table: string, key: string): Promise<ChannelStateReply<boolean>>;
  /** The table's whole content, replacing what it held, in one transaction. */
  replace(table: string, entries: ChannelStateEntry[]): Promise<ChannelStateReply<null>>;
}

interface StateNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): ChannelStateStore;
}

/**
 * One channel account's state object, or undefined when the Worker has no CHANNEL_STATE binding.
 * The object's name is `<channel>:<accountId>`: the name CommandRegistryDO used, so the objects it
 * created (renamed to ChannelStateDO by wrangler.toml's v11 migration) are the same objects.
 */
export function channelState(
  env: Record<string, unknown>,
  channel: string,
  accountId: string,
): ChannelStateStore | undefined {
  const namespace = env.CHANNEL_STATE as StateNamespace | undefined;
  if (!namespace || typeof namespace.idFromName !== "function") return undefined;
  return namespace.get(namespace.idFromName(`${channel}:${accountId}`));
}

/** A table a channel declares: its name in the object and the schema of one row. */
export interface StateTable<Row> {
  name: string;
  schema: z.ZodType<Row>;
  /** The row's key in the table (unique per row). */
  key(row: Row): string;
}

export function stateTable<Row>(table: StateTable<Row>): StateTable<Row> {
  if (!CHANNEL_STATE_LIMITS.tableName.test(table.name))
    throw new Error(`channel-state table name ${JSON.stringify(table.name)} is not a-z0-9_`);
  return table;
}

/** A declared table on one account's object: typed rows in, typed rows out. */
export interface TypedStateTable<Row> {
  get(key: string): Promise<Row | null>;
  list(): Promise<Row[]>;
  put(row: Row): Promise<void>;
  delete(key: string): Promise<boolean>;
  replace(rows: Row[]): Promise<void>;
}

export function openStateTable<Row>(
  store: ChannelStateStore,
  table: StateTable<Row>,
): TypedStateTable<Row> {
  const read = (value: unknown): Row => {
    const parsed = table.schema.safeParse(value);
    if (!parsed.success)
      throw new Error(
        `channel-state table ${table.name} holds a row its schema refuses: ${parsed.error.issues[0]?.message ?? "invalid"}`,
      );
    return parsed.data;
  };
  const write = (row: Row): ChannelStateEntry => ({
    key: table.key(row),
    value: table.schema.parse(row),
  });
  return {
    async get(key) {
      const value = answered(await store.get(table.name, key));
      return value === null ? null : read(value);
    },
    async list() {
      return answered(await store.list(table.name)).map((entry) => read(entry.value));
    },
    async put(row) {
      const entry = write(row);
      answered(await store.put(table.name, entry.key, entry.value));
    },
    delete: async (key) => answered(await store.delete(table.name, key)),
    replace: async (rows) => {
      answered(await store.replace(table.name, rows.map(write)));
    },
  };
}

function answered<T>(reply: ChannelStateReply<T>): T {
  if (!reply.ok) throw new Error(reply.refused);
  return reply.value;
}
