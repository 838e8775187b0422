import { DurableObject } from "cloudflare:workers";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { containerEnv } from "../functions/channels/companion/container-plan.ts";
import {
  ContainerKeeper,
  type ContainerActuator,
  type ContainerKeeperReport,
} from "./companion-keeper.ts";
import { migrate, type SchemaMigration } from "./lib/migrate.ts";
import type { Env } from "./env.ts";
import type { CompanionRpc, CompanionStatus, ConnectorReport, LeaseAnswer } from "./rpc.ts";

/**
 * One companion deployment's durable side (named by `companion.ingressKeys[].deployment`, default the
 * key id). Its one job: the lease that lets exactly one companion process run the deployment's
 * connectors, the epoch that fences a stale holder, the connectors' state (cursors, resume tokens,
 * session ids) written only under the current epoch, and the last status report for /health.
 *
 * Epochs only grow: every acquire takes the next one, so a process that lost its lease (paused,
 * partitioned, rolled over) can never write again with the epoch it still holds.
 *
 * When the deployment runs as a Cloudflare Container, it also keeps that container running
 * (companion-keeper.ts: backoff, crash-loop breaker; its alarm is the pending restart).
 */
interface LeaseRow {
  holder: string;
  epoch: number;
  expires_at: number;
  [column: string]: SqlStorageValue;
}

/** CompanionDO's tables, versioned by the shared migrator (lib/migrate.ts): append a step to change them. */
const COMPANION_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    why: "tables of this object (created with IF NOT EXISTS before versioned migrations)",
    statements: [
      `CREATE TABLE IF NOT EXISTS lease (id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL, epoch INTEGER NOT NULL, expires_at INTEGER NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS connector_state (channel TEXT NOT NULL, account_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, epoch INTEGER NOT NULL, PRIMARY KEY (channel, account_id, key))`,
      `CREATE TABLE IF NOT EXISTS status (id INTEGER PRIMARY KEY CHECK (id = 1), report TEXT NOT NULL)`,
    ],
  },
];

export class CompanionDO extends DurableObject<Env> implements CompanionRpc {
  private readonly sql: SqlStorage;
  private readonly keeper: ContainerKeeper;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.keeper = new ContainerKeeper({
      storage: ctx.storage,
      bounds: () => configFromEnv(env).companion.container,
      actuator: () => containerActuator(env),
      containerEnv: (deployment) => containerEnv(configFromEnv(env), env, deployment),
    });
    migrate(ctx.storage, { name: "CompanionDO", migrations: COMPANION_MIGRATIONS });
  }

  /**
   * acquire: free, expired or already ours → the next epoch. renew: still ours → same epoch, new
   * expiry (a lapsed lease nobody took since is still ours: no other epoch can have written). release:
   * ours → expires now, so the next instance need not wait out the ttl.
   */
  lease(instanceId: string, action: "acquire" | "renew" | "release", ttlMs: number): LeaseAnswer {
    const now = Date.now();
    const current = this.currentLease();
    const ours = current?.holder === instanceId;
    const free = !current || current.expires_at <= now;
    if (action === "release") {
      if (current && ours) this.sql.exec(`UPDATE lease SET expires_at = ? WHERE id = 1`, now);
      return { ok: true, epoch: current?.epoch ?? 0, ttlMs: 0 };
    }
    if (action === "renew") {
      if (!current || !ours) return this.refusal(current, now);
      this.sql.exec(`UPDATE lease SET expires_at = ? WHERE id = 1`, now + ttlMs);
      return { ok: true, epoch: current.epoch, ttlMs };
    }
    if (!free && !ours) return this.refusal(current, now);
    const epoch = (current?.epoch ?? 0) + 1;
    this.sql.exec(
      `INSERT INTO lease (id, holder, epoch, expires_at) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, epoch = excluded.epoch, expires_at = excluded.expires_at`,
      instanceId,
      epoch,
      now + ttlMs,
    );
    return { ok: true, epoch, ttlMs };
  }

  getState(channel: string, accountId: string, key: string): string | null {
    const row = this.sql
      .exec<{ value: string }>(
        `SELECT value FROM connector_state WHERE channel = ? AND account_id = ? AND key = ?`,
        channel,
        accountId,
        key,
      )
      .toArray()[0];
    return row?.value ?? null;
  }

  /** false: `epoch` is not the live lease's (a stale writer), nothing written. */
  putState(
    epoch: number,
    channel: string,
    accountId: string,
    key: string,
    value: string | null,
  ): boolean {
    if (!this.isLive(epoch)) return false;
    if (value === null)
      this.sql.exec(
        `DELETE FROM connector_state WHERE channel = ? AND account_id = ? AND key = ?`,
        channel,
        accountId,
        key,
      );
    else {
      this.sql.exec(
        `INSERT INTO connector_state (channel, account_id, key, value, epoch) VALUES (?, ?, ?, ?, ?) ON CONFLICT (channel, account_id, key) DO UPDATE SET value = excluded.value, epoch = excluded.epoch`,
        channel,
        accountId,
        key,
        value,
        epoch,
      );
    }
    return true;
  }

  /** Each key's value (null when unset). */
  getStates(channel: string, accountId: string, keys: string[]): Record<string, string | null> {
    const values: Record<string, string | null> = {};
    for (const key of keys) values[key] = this.getState(channel, accountId, key);
    return values;
  }

  /** Every entry or none (one transaction); false: `epoch` is not the live lease's, nothing written. */
  putStates(
    epoch: number,
    channel: string,
    accountId: string,
    entries: Array<{ key: string; value: string | null }>,
  ): boolean {
    if (!this.isLive(epoch)) return false;
    this.ctx.storage.transactionSync(() => {
      for (const { key, value } of entries) this.putState(epoch, channel, accountId, key, value);
    });
    return true;
  }

  /** false: stale epoch or another instance (its report would hide the live one's). */
  report(epoch: number, instanceId: string, connectors: ConnectorReport[]): boolean {
    const current = this.currentLease();
    if (!this.isLive(epoch) || current?.holder !== instanceId) return false;
    const report = { instance: instanceId, leaseEpoch: epoch, reportedAt: Date.now(), connectors };
    this.sql.exec(
      `INSERT INTO status (id, report) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET report = excluded.report`,
      JSON.stringify(report),
    );
    return true;
  }

  status(): CompanionStatus | null {
    const row = this.sql
      .exec<{ report: string }>(`SELECT report FROM status WHERE id = 1`)
      .toArray()[0];
    if (!row) return null;
    const report = JSON.parse(row.report) as Omit<CompanionStatus, "leaseHeld">;
    const current = this.currentLease();
    const leaseHeld =
      current !== undefined &&
      current.holder === report.instance &&
      current.epoch === report.leaseEpoch &&
      current.expires_at > Date.now();
    return { ...report, leaseHeld };
  }

  /** The Worker's periodic word: should this deployment's container run (under this config revision)? */
  keepContainer(
    deployment: string,
    wanted: boolean,
    revision: string,
  ): Promise<ContainerKeeperReport> {
    return this.keeper.keep(deployment, wanted, revision);
  }

  /** Reported by the container's own Durable Object when the container stopped. */
  containerStopped(exitCode: number, reason: string): Promise<ContainerKeeperReport> {
    return this.keeper.stopped(exitCode, reason);
  }

  /** Closes the crash-loop breaker and starts the container again if it is wanted. */
  resetContainer(): Promise<ContainerKeeperReport> {
    return this.keeper.reset();
  }

  containerReport(): ContainerKeeperReport {
    return this.keeper.report();
  }

  override async alarm(): Promise<void> {
    await this.keeper.alarm();
  }

  private isLive(epoch: number): boolean {
    const current = this.currentLease();
    return current !== undefined && current.epoch === epoch && current.expires_at > Date.now();
  }

  private currentLease(): LeaseRow | undefined {
    return this.sql
      .exec<LeaseRow>(`SELECT holder, epoch, expires_at FROM lease WHERE id = 1`)
      .toArray()[0];
  }

  private refusal(current: LeaseRow | undefined, now: number): LeaseAnswer {
    return {
      ok: false,
      holder: current?.holder ?? "",
      retryAfterMs: Math.max(0, (current?.expires_at ?? now) - now),
    };
  }
}

/** The deployment's container through its own Durable Object (named like this one), when the Worker has the binding. */
function containerActuator(env: Env): ContainerActuator | undefined {
  // Bound only when the deploy adds the companion container.
  const namespace = env.COMPANION_CONTAINER as Env["COMPANION_CONTAINER"] | undefined;
  if (!namespace) return undefined;
  return {
    launch: async (deployment, vars) => {
      await namespace.getByName(deployment).launch(deployment, vars);
    },
    halt: async (deployment) => {
      await namespace.getByName(deployment).halt();
    },
  };
}
