import {
  decideRestart,
  stopsWorthKeeping,
  type RecordedStop,
  type RestartBounds,
} from "../functions/channels/companion/restart-policy.ts";
import { migrate, type SchemaMigration } from "./lib/migrate.ts";

/**
 * The part of a companion deployment's Durable Object (companion.ts) that keeps its Cloudflare
 * Container running: whether it is wanted, when to start it again after a stop (exponential
 * backoff, restart-policy.ts), and the crash-loop breaker. It drives the container through
 * `ContainerActuator` (the container's own Durable Object, companion-container.ts) and owns the
 * deployment DO's alarm, which fires only for a pending restart.
 *
 * Kept here rather than in the container's class: that class cannot even be constructed without a
 * container runtime (so not in `npm run dev` or the workerd tests), and it reports a stop only to
 * whoever asks; here the decisions run on real storage and alarms everywhere.
 */
export interface ContainerActuator {
  /** Starts the container with these env vars (a no-op while it runs); throws when the platform cannot start it. */
  launch(deployment: string, vars: Record<string, string>): Promise<void>;
  /** SIGTERM: the companion drains its outbox and releases its lease. */
  halt(deployment: string): Promise<void>;
}

export type ContainerEnvResult =
  | { ok: true; vars: Record<string, string>; missingSecrets: string[] }
  | { ok: false; reason: string };

export interface ContainerKeeperReport {
  state: "not-wanted" | "running" | "restart-pending" | "breaker-open" | "waiting-for-config";
  /** Unix ms of the next start attempt (restart-pending). */
  restartAt?: number;
  breakerOpenedAt?: number;
  uncleanStopsInWindow: number;
  launchedAt?: number;
  lastStop?: { at: number; exitCode: number; reason: string };
  lastError?: string;
  missingSecrets?: string[];
}

interface KeeperRow {
  deployment: string;
  wanted: number;
  revision: string;
  restart_at: number | null;
  breaker_opened_at: number | null;
  launched_at: number | null;
  last_stop: string | null;
  last_error: string | null;
  missing_secrets: string | null;
  [column: string]: SqlStorageValue;
}

export interface KeeperDeps {
  storage: DurableObjectStorage;
  bounds: () => RestartBounds;
  actuator: () => ContainerActuator | undefined;
  /** The env to start the deployment's container with, built fresh at every start (secrets may have changed). */
  containerEnv: (deployment: string) => ContainerEnvResult;
}

/** ContainerKeeper's tables, versioned by the shared migrator (lib/migrate.ts): append a step to change them. */
const KEEPER_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    why: "tables of this object (created with IF NOT EXISTS before versioned migrations)",
    statements: [
      `CREATE TABLE IF NOT EXISTS container_keeper (id INTEGER PRIMARY KEY CHECK (id = 1), deployment TEXT NOT NULL, wanted INTEGER NOT NULL, revision TEXT NOT NULL, restart_at INTEGER, breaker_opened_at INTEGER, launched_at INTEGER, last_stop TEXT, last_error TEXT, missing_secrets TEXT)`,
      `CREATE TABLE IF NOT EXISTS container_stops (at INTEGER NOT NULL, clean INTEGER NOT NULL)`,
    ],
  },
];

export class ContainerKeeper {
  private readonly sql: SqlStorage;

  constructor(private readonly deps: KeeperDeps) {
    this.sql = deps.storage.sql;
    migrate(deps.storage, { name: "ContainerKeeper", migrations: KEEPER_MIGRATIONS });
  }

  /**
   * The Worker's periodic word on this deployment (cron, and the first request an isolate serves):
   * wanted or not, under which config revision. A new revision (a deploy that changed the config)
   * closes the breaker. Wanted, not broken and no restart pending → start it (idempotent while it runs).
   */
  async keep(
    deployment: string,
    wanted: boolean,
    revision: string,
  ): Promise<ContainerKeeperReport> {
    const row = this.row();
    if (!wanted) {
      this.sql.exec(
        `INSERT INTO container_keeper (id, deployment, wanted, revision) VALUES (1, ?, 0, ?) ON CONFLICT (id) DO UPDATE SET wanted = 0, revision = excluded.revision, restart_at = NULL`,
        deployment,
        revision,
      );
      await this.deps.storage.deleteAlarm();
      if (row?.wanted) await this.deps.actuator()?.halt(deployment);
      return this.report();
    }
    const revised = row !== undefined && row.revision !== revision;
    if (revised) this.clearBreaker();
    this.sql.exec(
      `INSERT INTO container_keeper (id, deployment, wanted, revision) VALUES (1, ?, 1, ?) ON CONFLICT (id) DO UPDATE SET deployment = excluded.deployment, wanted = 1, revision = excluded.revision`,
      deployment,
      revision,
    );
    const current = this.row()!;
    if (current.breaker_opened_at !== null) return this.report();
    if (current.restart_at !== null && current.restart_at > Date.now()) {
      await this.deps.storage.setAlarm(current.restart_at);
      return this.report();
    }
    await this.launch();
    return this.report();
  }

  /** The container stopped (its Durable Object's onStop). Wanted → restart after backoff, or open the breaker. */
  async stopped(exitCode: number, reason: string): Promise<ContainerKeeperReport> {
    const now = Date.now();
    const row = this.row();
    if (!row) return this.report();
    this.sql.exec(
      `UPDATE container_keeper SET launched_at = NULL, last_stop = ? WHERE id = 1`,
      JSON.stringify({ at: now, exitCode, reason }),
    );
    if (!row.wanted) return this.report();
    await this.afterStop({ at: now, clean: exitCode === 0 });
    return this.report();
  }

  /** The deployment DO's alarm: a pending restart is due. */
  async alarm(): Promise<void> {
    const row = this.row();
    if (!row?.wanted || row.breaker_opened_at !== null || row.restart_at === null) return;
    if (row.restart_at > Date.now()) {
      await this.deps.storage.setAlarm(row.restart_at);
      return;
    }
    this.sql.exec(`UPDATE container_keeper SET restart_at = NULL WHERE id = 1`);
    await this.launch();
  }

  /** The operator's reset: forget the unclean stops, close the breaker, start again if wanted. */
  async reset(): Promise<ContainerKeeperReport> {
    this.clearBreaker();
    const row = this.row();
    if (row?.wanted) await this.launch();
    return this.report();
  }

  report(): ContainerKeeperReport {
    const row = this.row();
    const bounds = this.deps.bounds();
    const uncleanStopsInWindow = this.stops().filter(
      (stop) => !stop.clean && stop.at > Date.now() - bounds.crashLoopWindowMs,
    ).length;
    const base = {
      uncleanStopsInWindow,
      ...(row?.launched_at != null ? { launchedAt: row.launched_at } : {}),
      ...(row?.last_stop
        ? { lastStop: JSON.parse(row.last_stop) as ContainerKeeperReport["lastStop"] }
        : {}),
      ...(row?.last_error ? { lastError: row.last_error } : {}),
      ...(row?.missing_secrets
        ? { missingSecrets: JSON.parse(row.missing_secrets) as string[] }
        : {}),
    };
    if (!row?.wanted) return { state: "not-wanted", ...base };
    if (row.breaker_opened_at !== null)
      return { state: "breaker-open", breakerOpenedAt: row.breaker_opened_at, ...base };
    if (row.restart_at !== null)
      return { state: "restart-pending", restartAt: row.restart_at, ...base };
    if (row.launched_at !== null) return { state: "running", ...base };
    return { state: "waiting-for-config", ...base };
  }

  private async launch(): Promise<void> {
    const row = this.row()!;
    const actuator = this.deps.actuator();
    if (!actuator) {
      this.sql.exec(
        `UPDATE container_keeper SET last_error = ? WHERE id = 1`,
        "no container binding (COMPANION_CONTAINER) in this Worker",
      );
      return;
    }
    const plan = this.deps.containerEnv(row.deployment);
    // A config problem is not a crash: nothing to back off from; the next keep() (cron) tries again.
    if (!plan.ok) {
      this.sql.exec(
        `UPDATE container_keeper SET last_error = ?, launched_at = NULL WHERE id = 1`,
        plan.reason,
      );
      return;
    }
    this.sql.exec(
      `UPDATE container_keeper SET missing_secrets = ? WHERE id = 1`,
      plan.missingSecrets.length ? JSON.stringify(plan.missingSecrets) : null,
    );
    try {
      await actuator.launch(row.deployment, plan.vars);
      this.sql.exec(
        `UPDATE container_keeper SET launched_at = COALESCE(launched_at, ?), last_error = NULL WHERE id = 1`,
        Date.now(),
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.sql.exec(
        `UPDATE container_keeper SET launched_at = NULL, last_error = ? WHERE id = 1`,
        `start failed: ${message}`,
      );
      await this.afterStop({ at: Date.now(), clean: false });
    }
  }

  private async afterStop(stop: RecordedStop): Promise<void> {
    const bounds = this.deps.bounds();
    const stops = stopsWorthKeeping([...this.stops(), stop], stop.at, bounds);
    this.sql.exec(`DELETE FROM container_stops`);
    for (const kept of stops)
      this.sql.exec(
        `INSERT INTO container_stops (at, clean) VALUES (?, ?)`,
        kept.at,
        kept.clean ? 1 : 0,
      );
    const decision = decideRestart(stops, stop.at, bounds);
    if (decision.action === "breaker") {
      this.sql.exec(
        `UPDATE container_keeper SET breaker_opened_at = ?, restart_at = NULL WHERE id = 1`,
        stop.at,
      );
      await this.deps.storage.deleteAlarm();
      console.error(
        `companion container: ${decision.uncleanInWindow} unclean stops within ${bounds.crashLoopWindowMs} ms; not restarting until a reset or a config change`,
      );
      return;
    }
    this.sql.exec(`UPDATE container_keeper SET restart_at = ? WHERE id = 1`, decision.at);
    await this.deps.storage.setAlarm(decision.at);
  }

  private clearBreaker(): void {
    this.sql.exec(`DELETE FROM container_stops`);
    this.sql.exec(
      `UPDATE container_keeper SET breaker_opened_at = NULL, restart_at = NULL WHERE id = 1`,
    );
  }

  private stops(): RecordedStop[] {
    return this.sql
      .exec<{ at: number; clean: number }>(`SELECT at, clean FROM container_stops ORDER BY at`)
      .toArray()
      .map((row) => ({ at: row.at, clean: row.clean === 1 }));
  }

  private row(): KeeperRow | undefined {
    return this.sql.exec<KeeperRow>(`SELECT * FROM container_keeper WHERE id = 1`).toArray()[0];
  }
}
