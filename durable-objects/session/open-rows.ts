/**
 * How the inbox and the outbox find their open rows without an index (schema step 19 dropped
 * `inbox_open` and `outbox_open`, whose entry was a billed row per event and per reply chunk): a
 * superset of the open rows' keys kept in memory (`OpenKeys`: the inbox's seqs, the outbox's
 * chunk ids), one per table and object, shared by every store built on the object's storage in
 * this isolate (`openRowsOf`), so a store made later (a test reading a live object) and the
 * object's own store never disagree. A key joins before the write that opens its row runs; reads
 * look each key up by primary key, so a read costs the open rows, never the tombstones and sent
 * chunks kept 48 h (a floor under the inbox's seqs would still read every tombstone above the
 * oldest open event: a run that waits for hours while commands are answered).
 *
 * ROLLBACK. An exception inside `transactionSync` rolls storage back but not memory: a row a
 * rolled-back transaction had settled is open again. So a set is only ever narrowed (a key
 * dropped, the set loaded) from a read taken outside every transaction: reads done anywhere only
 * queue the narrowing (`outsideTransactions`), which runs in a microtask — after the synchronous
 * code running now has returned, so after every `transactionSync` open now has committed or rolled
 * back (its callback is synchronous; a microtask runs only on an empty stack) — and reads again
 * there what it relies on. A narrowing read then sees only committed storage (or writes of the
 * implicit transaction, which no exception undoes: if its commit fails the object is reset, memory
 * and all). Widening (a key joining) is always safe and is done at once. The SessionDO uses no
 * asynchronous `storage.transaction()`, inside which a microtask could run; one would need the
 * sets reset when it fails. A set not yet known in this isolate (a new isolate, or a new store:
 * `reset`) is read by a scan of its table until the first narrowing has loaded it.
 */

/**
 * Runs `check` once the synchronous code running now has returned (see ROLLBACK above). If it
 * throws (storage gone with the object), `failed` leaves the set in its widest, safe state.
 */
function outsideTransactions(check: () => void, failed: () => void): void {
  queueMicrotask(() => {
    try {
      check();
    } catch {
      failed();
    }
  });
}

/** A superset of the keys of a table's open rows (undefined until loaded: reads scan the table). */
export class OpenKeys<K extends string | number> {
  private keys: Set<K> | undefined;
  private loading = false;
  private readonly closing = new Set<K>();
  private closingQueued = false;

  get known(): ReadonlySet<K> | undefined {
    return this.keys;
  }

  /** Before the write that opens row `key` runs (its insert, a dead chunk retried). */
  opening(key: K): void {
    this.keys?.add(key);
  }

  /** A read had to scan (keys not known yet): they are loaded by `openKeys`, outside any transaction. */
  loadLater(openKeys: () => K[]): void {
    if (this.keys || this.loading) return;
    this.loading = true;
    outsideTransactions(
      () => {
        this.loading = false;
        this.keys ??= new Set(openKeys());
      },
      () => {
        this.loading = false;
        this.keys = undefined;
      },
    );
  }

  /**
   * A read by primary key found row `key` settled or missing: it leaves the set if `stillOpen`,
   * asked again outside any transaction, says it is settled or missing there too.
   */
  closeLater(key: K, stillOpen: (key: K) => boolean): void {
    this.closing.add(key);
    if (this.closingQueued) return;
    this.closingQueued = true;
    outsideTransactions(
      () => {
        this.closingQueued = false;
        for (const candidate of this.closing)
          if (!stillOpen(candidate)) this.keys?.delete(candidate);
        this.closing.clear();
      },
      () => {
        this.closingQueued = false;
        this.closing.clear();
        this.keys = undefined;
      },
    );
  }

  /** Forgets the set: the next reads scan the table until it is loaded again. */
  reset(): void {
    this.keys = undefined;
  }
}

export interface OpenRows {
  /** Seqs of the inbox's open events (not settled). */
  inbox: OpenKeys<number>;
  /** Ids of the outbox's open chunks (not sent nor dead). */
  outbox: OpenKeys<string>;
}

const byStorage = new WeakMap<object, OpenRows>();

/**
 * The open-row sets of the object whose storage is `database` (its `SqlStorage`), made the first
 * time. A store built on it resets them (`SessionStore`), so rows written around the sets (a
 * migration, a test's own SQL) are found by the scan that loads them again.
 */
export function openRowsOf(database: object): OpenRows {
  let rows = byStorage.get(database);
  if (!rows) byStorage.set(database, (rows = { inbox: new OpenKeys(), outbox: new OpenKeys() }));
  return rows;
}
