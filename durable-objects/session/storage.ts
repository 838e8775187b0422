import { migrateSessionSchema, type SchemaHost } from "./schema.ts";
import { MetaStore } from "./meta.ts";
import { InboxStore } from "./inbox/store.ts";
import { GroupHistoryStore } from "./inbox/group-history-store.ts";
import { RunStore } from "./run/runs-store.ts";
import { TranscriptStore } from "./run/transcript-store.ts";
import { OutboxStore } from "./outbox/store.ts";
import { ModelCallStore } from "./mirror/model-calls.ts";
import { MirrorWatermarks } from "./mirror/watermark.ts";
import { PendingMetricsStore } from "./upkeep/metrics-store.ts";
import { ResponsesStore } from "./responses/store.ts";
import { openRowsOf } from "./open-rows.ts";

export { MAX_STORED_VALUE_BYTES, TOMBSTONE_MS } from "./inbox/store.ts";
export type {
  InboxRow,
  InboxState,
  OutboxRow,
  OutboxState,
  PreparedMessage,
  RunOptions,
  RunRow,
  RunState,
  TranscriptRow,
} from "./storage-rows.ts";

/**
 * The SessionDO's storage: one store per table, each owned by its phase (README.md lists them).
 * This class only migrates the schema and builds the stores; it holds no SQL of its own.
 */
export class SessionStore {
  readonly meta: MetaStore;
  readonly inbox: InboxStore;
  readonly groupHistory: GroupHistoryStore;
  readonly runs: RunStore;
  readonly transcript: TranscriptStore;
  readonly outbox: OutboxStore;
  readonly modelCalls: ModelCallStore;
  /** What the Postgres mirror has copied, and the stamps of rows it is to copy. */
  readonly mirrorMarks: MirrorWatermarks;
  readonly metrics: PendingMetricsStore;
  readonly responses: ResponsesStore;

  /**
   * Brings the object's tables up to the current schema first (see schema.ts). Pass the whole
   * storage so the migration runs in one transaction; a bare SqlStorage is for objects the
   * SessionDO constructor has already migrated (tests reading a live object). `database` names
   * the object's storage when `storage.sql` wraps it (the step profile's meter): every store on
   * one object shares the bounds that find its open rows (open-rows.ts), which a new store resets.
   */
  constructor(storage: SqlStorage | SchemaHost, database?: SqlStorage) {
    const host: SchemaHost =
      "sql" in storage ? storage : { sql: storage, transactionSync: (work) => work() };
    migrateSessionSchema(host);
    const { sql } = host;
    const open = openRowsOf(database ?? sql);
    open.inbox.reset();
    open.outbox.reset();
    this.meta = new MetaStore(sql);
    this.inbox = new InboxStore(sql, this.meta, open.inbox);
    this.groupHistory = new GroupHistoryStore(sql);
    this.mirrorMarks = new MirrorWatermarks(sql, this.meta);
    this.modelCalls = new ModelCallStore(sql, this.meta, this.mirrorMarks);
    this.runs = new RunStore(sql, this.meta, this.mirrorMarks, this.modelCalls);
    this.transcript = new TranscriptStore(sql, this.meta, this.mirrorMarks);
    this.outbox = new OutboxStore(sql, open.outbox);
    this.metrics = new PendingMetricsStore(this.meta);
    this.responses = new ResponsesStore(sql);
  }
}
