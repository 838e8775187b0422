import type {
  ConnectorAccount,
  ConnectorContext,
  ConnectorStatus,
  RawEvent,
} from "../../src/connector.ts";

/**
 * A ConnectorContext held in memory, for connector tests against a fake platform: submit() stores
 * events in `stored` (optionally held until `release()`, or failed), state is a Map, statuses are
 * recorded in order. Stands in for the companion core (outbox + Worker) without either.
 */
export class MemoryContext implements ConnectorContext {
  readonly stored: RawEvent[] = [];
  readonly statuses: ConnectorStatus[] = [];
  readonly logs: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  readonly values = new Map<string, string>();
  private readonly controller = new AbortController();
  private gate: Promise<void> | undefined;
  private openGate: (() => void) | undefined;
  /** When set, submit() rejects with it. */
  failWith: Error | undefined;

  constructor(
    readonly account: ConnectorAccount,
    private readonly secrets: Record<string, string> = {},
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  secret(name: string): string | undefined {
    const envName = this.account.secretEnv[name];
    return envName ? this.secrets[envName] : undefined;
  }

  /** From now on, submit() waits until release(). */
  hold(): void {
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  release(): void {
    this.openGate?.();
    this.gate = undefined;
  }

  async submit(events: RawEvent[]): Promise<void> {
    if (this.gate) await this.gate;
    if (this.failWith) throw this.failWith;
    for (const event of events)
      if (!this.stored.some((e) => e.eventId === event.eventId)) this.stored.push(event);
  }

  state = {
    get: async (key: string) => this.values.get(key),
    put: async (key: string, value: string | null) => {
      if (value === null) this.values.delete(key);
      else this.values.set(key, value);
    },
    getMany: async (keys: string[]) =>
      new Map(keys.flatMap((key) => (this.values.has(key) ? [[key, this.values.get(key)!]] : []))),
    putMany: async (entries: Array<{ key: string; value: string | null }>) => {
      for (const { key, value } of entries) await this.state.put(key, value);
    },
  };

  setStatus(status: ConnectorStatus): void {
    this.statuses.push({ ...status });
  }

  log(
    level: "debug" | "info" | "warn" | "error",
    message: string,
    fields?: Record<string, unknown>,
  ): void {
    this.logs.push({ level, message, fields });
  }

  abort(): void {
    this.controller.abort();
  }

  get state_(): ConnectorStatus["state"] | undefined {
    return this.statuses.at(-1)?.state;
  }
}

export async function until<T>(
  probe: () => T | undefined | false,
  timeoutMs = 5_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
