/**
 * Where a message's time and money go inside its SessionDO, step by step — opt-in, for
 * scripts/bench/message-cost.ts (EDGECLAW_STEP_PROFILE=1; off, nothing is wrapped and this file
 * costs nothing). Per step (accept, triage, run, outbox, mirror, metrics, upkeep …): wall time, the
 * SQLite rows written and read as the platform counts them (each cursor's own `rowsWritten` /
 * `rowsRead`: rows written are what Durable Object SQLite bills), and the calls made to other
 * Durable Objects (budget reserve/settle, metrics shard) with their wall time. One log line
 * `{"event":"session_step_profile", …}` per accept and per alarm pass.
 *
 * Steps are attributed by the label in force when a statement runs or a call starts; work that
 * overlaps in one isolate (an accept during a pass) is counted under whichever label was last set,
 * which is why the bench sends one message at a time.
 */

interface StepFigures {
  ms: number;
  rowsWritten: number;
  rowsRead: number;
  statements: number;
}

interface Metered {
  step: string;
  table: string;
  query: string;
  cursor: SqlStorageCursor<Record<string, SqlStorageValue>>;
}

/**
 * The table a statement writes or reads first (for the per-table breakdown); `meta` statements
 * name their key (its family for keyed ones: `meta:spend`), since meta holds many jobs.
 */
function tableOf(query: string, firstBinding: unknown): string {
  const match = /\b(?:INTO|UPDATE|FROM|TABLE(?: IF NOT EXISTS)?)\s+([a-z_]+)/i.exec(query);
  const table = match?.[1] ?? "schema";
  if (table !== "meta" || typeof firstBinding !== "string" || !/key = \?|VALUES\(\?/.test(query))
    return table;
  return `meta:${firstBinding.split(":")[0]}`;
}

export class StepProfile {
  private label = "other";
  private readonly times = new Map<string, number>();
  private readonly calls = new Map<string, { count: number; ms: number; step: string }>();
  private metered: Metered[] = [];

  /** The object's SqlStorage, with every statement's cursor kept for the report. */
  meter(sql: SqlStorage): SqlStorage {
    return new Proxy(sql, {
      get: (target, property) => {
        if (property === "exec")
          return (query: string, ...bindings: unknown[]) => {
            const cursor = target.exec(query, ...bindings);
            this.metered.push({
              step: this.label,
              table: tableOf(query, bindings[0]),
              query,
              cursor,
            });
            return cursor;
          };
        return boundTo(target, Reflect.get(target, property, target));
      },
    });
  }

  /** Bindings whose Durable Object stubs count and time every call made through them. */
  meterEnv<E extends object>(env: E): E {
    const wrapped: Record<string, unknown> = { ...(env as Record<string, unknown>) };
    for (const [name, binding] of Object.entries(env)) {
      if (!isNamespace(binding)) continue;
      wrapped[name] = new Proxy(binding, {
        get: (target, property) => {
          const value = Reflect.get(target, property, target) as unknown;
          if (property !== "get" || typeof value !== "function") return boundTo(target, value);
          return (...args: unknown[]) =>
            this.meterStub(name, Reflect.apply(value, target, args) as object);
        },
      });
    }
    return wrapped as E;
  }

  private meterStub(binding: string, stub: object): object {
    return new Proxy(stub, {
      get: (target, property) => {
        const value = Reflect.get(target, property) as unknown;
        if (typeof property !== "string" || typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          const key = `${binding}.${property}`;
          const entry = this.calls.get(key) ?? { count: 0, ms: 0, step: this.label };
          this.calls.set(key, entry);
          entry.count += 1;
          const started = Date.now();
          try {
            // Reflect.apply, not value.apply: on an RPC stub `.apply` is itself a remote method.
            return await Reflect.apply(value, target, args);
          } finally {
            entry.ms += Date.now() - started;
          }
        };
      },
    });
  }

  /** Runs `work` under `label` (time and rows land there), then restores the label before it. */
  async step<T>(label: string, work: () => T | Promise<T>): Promise<T> {
    const before = this.label;
    this.label = label;
    const started = Date.now();
    try {
      return await work();
    } finally {
      this.times.set(label, (this.times.get(label) ?? 0) + Date.now() - started);
      this.label = before;
    }
  }

  /** step() for synchronous work. */
  stepSync<T>(label: string, work: () => T): T {
    const before = this.label;
    this.label = label;
    const started = Date.now();
    try {
      return work();
    } finally {
      this.times.set(label, (this.times.get(label) ?? 0) + Date.now() - started);
      this.label = before;
    }
  }

  /** One log line with everything since the last report, then starts over. */
  report(trigger: string, sessionKey: string | undefined): void {
    const steps: Record<string, StepFigures> = {};
    const tables: Record<string, number> = {};
    const writes: Record<string, number> = {};
    let rowsWritten = 0;
    for (const { step, table, query, cursor } of this.metered) {
      const figures = (steps[step] ??= { ms: 0, rowsWritten: 0, rowsRead: 0, statements: 0 });
      figures.rowsWritten += cursor.rowsWritten;
      figures.rowsRead += cursor.rowsRead;
      figures.statements += 1;
      if (cursor.rowsWritten) {
        tables[table] = (tables[table] ?? 0) + cursor.rowsWritten;
        const statement = `${step}: ${table.startsWith("meta:") ? `[${table}] ` : ""}${query.replace(/\s+/g, " ").slice(0, 100)}`;
        writes[statement] = (writes[statement] ?? 0) + cursor.rowsWritten;
      }
      rowsWritten += cursor.rowsWritten;
    }
    for (const [step, ms] of this.times)
      (steps[step] ??= { ms: 0, rowsWritten: 0, rowsRead: 0, statements: 0 }).ms = ms;
    const calls = Object.fromEntries(this.calls);
    const doCalls = [...this.calls.values()].reduce((sum, call) => sum + call.count, 0);
    console.log(
      JSON.stringify({
        event: "session_step_profile",
        trigger,
        sessionKey,
        rowsWritten,
        doCalls,
        steps,
        tables,
        writes,
        calls,
      }),
    );
    this.metered = [];
    this.times.clear();
    this.calls.clear();
  }
}

/**
 * A method read off `target`, callable on its own. Reflect.apply, never `value.bind(target)`: on an
 * RPC stub every property is a remote method, `bind` included.
 */
function boundTo(target: object, value: unknown): unknown {
  if (typeof value !== "function") return value;
  return (...args: unknown[]) => Reflect.apply(value, target, args);
}

/**
 * A Durable Object namespace. A service binding (an RPC stub: `AI`, `BROWSER_WORKER`) answers every
 * property with a callable, `idFromName` and `get` too, so what tells them apart is `fetch`, which
 * every service binding has and no namespace does.
 */
function isNamespace(value: unknown): value is DurableObjectNamespace {
  if (typeof value !== "object" || value === null) return false;
  const binding = value as { idFromName?: unknown; get?: unknown; fetch?: unknown };
  return (
    typeof binding.idFromName === "function" &&
    typeof binding.get === "function" &&
    typeof binding.fetch !== "function"
  );
}
