/**
 * What became of each visible Signal command (a message, a reaction), kept where a companion that
 * restarts — or another instance that takes the lease over — finds it: the connector's durable
 * state in the Worker's companion Durable Object. `pending` is written before signal-cli is asked,
 * `sent:<timestamp>` once it answered, so a retried command is never sent twice: a sent one is
 * answered with its timestamp, a pending one (the process died, or the answer was lost, while
 * signal-cli may have sent it) is refused as outcome unknown. Bounded: the oldest entries past
 * `limit` are forgotten (the Worker's outbox gives up on a command long before).
 */
export interface CommandJournal {
  get(commandId: string): Promise<JournalEntry | undefined>;
  pending(commandId: string): Promise<void>;
  sent(commandId: string, timestamp: number): Promise<void>;
  /** signal-cli answered that it sent nothing: the command may be tried again. */
  clear(commandId: string): Promise<void>;
}

export type JournalEntry = { state: "pending" } | { state: "sent"; timestamp: number };

export interface StateStore {
  get(key: string): Promise<string | undefined>;
  put(key: string, value: string | null): Promise<void>;
}

const INDEX_KEY = "journal-index";

export function stateJournal(state: StateStore, limit = 1000): CommandJournal {
  let queue: Promise<unknown> = Promise.resolve();
  /** One write after another: the index is read, changed and written whole. */
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };
  const key = (commandId: string) => `cmd:${commandId}`;
  const put = (commandId: string, value: string | null) =>
    serial(async () => {
      await state.put(key(commandId), value);
      if (value === null) return;
      const index = JSON.parse((await state.get(INDEX_KEY)) ?? "[]") as string[];
      if (index.includes(commandId)) return;
      index.push(commandId);
      const forgotten = index.splice(0, Math.max(0, index.length - limit));
      for (const old of forgotten) await state.put(key(old), null);
      await state.put(INDEX_KEY, JSON.stringify(index));
    });
  return {
    async get(commandId) {
      const value = await state.get(key(commandId));
      if (value === undefined) return undefined;
      if (value.startsWith("sent:")) return { state: "sent", timestamp: Number(value.slice(5)) };
      return { state: "pending" };
    },
    pending: (commandId) => put(commandId, "pending"),
    sent: (commandId, timestamp) => put(commandId, `sent:${timestamp}`),
    clear: (commandId) => put(commandId, null),
  };
}

/** The same journal in memory: for a stand-in that has no companion state (the workerd tests' companion). */
export function memoryJournal(): CommandJournal {
  const values = new Map<string, string>();
  return stateJournal({
    get: async (k) => values.get(k),
    put: async (k, v) => void (v === null ? values.delete(k) : values.set(k, v)),
  });
}
