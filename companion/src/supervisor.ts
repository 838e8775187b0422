import type {
  Connector,
  ConnectorAccount,
  ConnectorContext,
  ConnectorSource,
  ConnectorStatus,
  RawEvent,
} from "./connector.ts";
import { delay, jitteredDelay } from "./backoff.ts";

/**
 * Runs one connector per assigned account and keeps it running: a start() that throws is retried
 * with exponential backoff and jitter; `crashLoopStarts` unclean starts within `crashLoopWindowMs`
 * stop the retries (state "fatal", "crash loop") until the process restarts — the seed's crash-loop
 * breaker. A connector that reports "fatal" itself (bad token, webhook still set) is left stopped.
 * Connectors are isolated: one that throws never takes the others or the process down.
 */
export interface SupervisorDeps {
  connectors: ConnectorSource;
  submit(channel: string, accountId: string, events: RawEvent[]): Promise<void>;
  state: {
    get(channel: string, accountId: string, key: string): Promise<string | undefined>;
    put(channel: string, accountId: string, key: string, value: string | null): Promise<void>;
    getMany(channel: string, accountId: string, keys: string[]): Promise<Map<string, string>>;
    putMany(
      channel: string,
      accountId: string,
      entries: Array<{ key: string; value: string | null }>,
    ): Promise<void>;
  };
  env: Record<string, string | undefined>;
  log(
    level: "debug" | "info" | "warn" | "error",
    message: string,
    fields?: Record<string, unknown>,
  ): void;
  onStatus(): void;
  crashLoopStarts: number;
  crashLoopWindowMs: number;
}

export interface ConnectorReport extends ConnectorStatus {
  channel: string;
  accountId: string;
}

interface Running {
  account: ConnectorAccount;
  connector?: Connector;
  controller: AbortController;
  status: ConnectorStatus;
  uncleanStarts: number[];
}

export class Supervisor {
  private readonly running = new Map<string, Running>();

  constructor(private readonly deps: SupervisorDeps) {}

  startAll(accounts: ConnectorAccount[]): void {
    for (const account of accounts) {
      const key = `${account.channel}/${account.accountId}`;
      if (this.running.has(key)) continue;
      const entry: Running = {
        account,
        controller: new AbortController(),
        status: { state: "starting" },
        uncleanStarts: [],
      };
      this.running.set(key, entry);
      void this.run(entry);
    }
  }

  async stopAll(reason: "shutdown" | "lease-lost" | "reload"): Promise<void> {
    const entries = [...this.running.values()];
    this.running.clear();
    await Promise.all(
      entries.map(async (entry) => {
        entry.controller.abort();
        await entry.connector?.stop(reason).catch((error: unknown) =>
          this.deps.log("warn", "connector stop failed", {
            channel: entry.account.channel,
            accountId: entry.account.accountId,
            error: messageOf(error),
          }),
        );
        entry.status = { ...entry.status, state: "stopped" };
      }),
    );
    this.deps.onStatus();
  }

  /** The live connector of an account (for /v1/outbound). */
  connector(channel: string, accountId: string): Connector | undefined {
    return this.running.get(`${channel}/${accountId}`)?.connector;
  }

  reports(): ConnectorReport[] {
    return [...this.running.values()].map((entry) => ({
      channel: entry.account.channel,
      accountId: entry.account.accountId,
      ...entry.status,
    }));
  }

  private async run(entry: Running): Promise<void> {
    const { account, controller } = entry;
    const factory = await this.deps.connectors(account.channel);
    if (!factory)
      return this.setStatus(entry, {
        state: "fatal",
        lastError: `this companion has no connector for channel "${account.channel}"`,
      });
    let attempt = 0;
    while (!controller.signal.aborted) {
      try {
        entry.connector = factory(account);
        await entry.connector.start(this.context(entry));
        return;
      } catch (error) {
        if (controller.signal.aborted) return;
        const now = Date.now();
        entry.uncleanStarts = [
          ...entry.uncleanStarts.filter((at) => now - at < this.deps.crashLoopWindowMs),
          now,
        ];
        if (entry.uncleanStarts.length >= this.deps.crashLoopStarts) {
          this.deps.log("error", "connector crash loop: not restarting it", {
            channel: account.channel,
            accountId: account.accountId,
            error: messageOf(error),
          });
          return this.setStatus(entry, {
            state: "fatal",
            lastError: `crash loop (${entry.uncleanStarts.length} failed starts): ${messageOf(error)}`,
          });
        }
        const wait = jitteredDelay(attempt++, 1_000, 60_000);
        this.setStatus(entry, { state: "backoff", lastError: messageOf(error) });
        this.deps.log("warn", "connector failed to start; retrying", {
          channel: account.channel,
          accountId: account.accountId,
          error: messageOf(error),
          waitMs: wait,
        });
        await entry.connector?.stop("reload").catch(() => undefined);
        await delay(wait, controller.signal);
      }
    }
  }

  private context(entry: Running): ConnectorContext {
    const { account, controller } = entry;
    const { channel, accountId } = account;
    return {
      account,
      secret: (name) => {
        const envName = account.secretEnv[name];
        const value = envName ? this.deps.env[envName] : undefined;
        return value ? value : undefined;
      },
      submit: async (events) => {
        if (events.length) entry.status = { ...entry.status, lastEventAt: Date.now() };
        await this.deps.submit(channel, accountId, events);
      },
      state: {
        get: (key) => this.deps.state.get(channel, accountId, key),
        put: (key, value) => this.deps.state.put(channel, accountId, key, value),
        getMany: (keys) => this.deps.state.getMany(channel, accountId, keys),
        putMany: (entries) => this.deps.state.putMany(channel, accountId, entries),
      },
      setStatus: (status) => this.setStatus(entry, status),
      log: (level, message, fields) =>
        this.deps.log(level, message, { channel, accountId, ...fields }),
      signal: controller.signal,
    };
  }

  private setStatus(entry: Running, status: ConnectorStatus): void {
    const changed =
      status.state !== entry.status.state ||
      status.lastError !== entry.status.lastError ||
      JSON.stringify(status.link) !== JSON.stringify(entry.status.link);
    entry.status = {
      ...entry.status,
      ...status,
      lastEventAt: status.lastEventAt ?? entry.status.lastEventAt,
    };
    if (changed) this.deps.onStatus();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
