import { AsyncLocalStorage } from "node:async_hooks";
import { configFromEnvWith } from "../config/load.ts";
import { databaseSchema } from "../config/infrastructure-schema.ts";
import {
  isTransportFailure,
  openConnection,
  type ConnectionTarget,
  type Db,
  type PgConnection,
} from "./connection.ts";
import { TransientError } from "../core/errors.ts";
import { ConnectionGate, PostgresUnavailableError, type GateLimits, type Permit } from "./gate.ts";

export type { Db } from "./connection.ts";
export { PostgresUnavailableError } from "./gate.ts";

export interface DbEnv {
  DATABASE_URL?: string;
  EDGECLAW_PG_WS_PROXY?: string;
  EDGECLAW_CONFIG?: string;
}

/**
 * Transient: the events that need the database wait (within their bound on attempts) for the
 * deploy that sets the secret, instead of being dead-lettered at once.
 */
export class DatabaseNotConfiguredError extends TransientError {
  constructor() {
    super(
      "DATABASE_URL is not set: run `npm run dev`, or set the Worker secret DATABASE_URL to your Neon connection string",
    );
  }
}

/**
 * Runs `work` with a drizzle client. Inside `withDbBatch` it shares the batch's connection;
 * otherwise it gets a connection of its own, closed when the work ends. Either way the connection
 * counts against the isolate's bound (`database.maxConnections`), and while Postgres is known to
 * be down it fails fast with PostgresUnavailableError instead of opening a socket.
 */
export async function withDb<T>(env: DbEnv, work: (db: Db) => Promise<T>): Promise<T> {
  if (!env.DATABASE_URL) throw new DatabaseNotConfiguredError();
  const current = batches.getStore();
  if (current?.serves(env)) return current.run(work);
  const own = new DbBatch(env, 0);
  try {
    return await batches.run(own, () => own.run(work));
  } finally {
    own.end();
  }
}

/**
 * Runs `work` so that every `withDb` inside it — however deep (access checks, workspace reads,
 * tools, mirror, audit) — shares one connection: a Durable Object's alarm pass opens one socket,
 * not one per query. The connection opens on first use and closes when `work` ends, or earlier once
 * it has sat unused for `database.idleCloseMs`, so a long model call in between holds no slot.
 */
export async function withDbBatch<T>(env: DbEnv, work: () => Promise<T>): Promise<T> {
  if (!env.DATABASE_URL || batches.getStore()?.serves(env)) return work();
  const batch = new DbBatch(env, limitsFor(env).idleCloseMs);
  try {
    return await batches.run(batch, work);
  } finally {
    batch.end();
  }
}

/** Connections this isolate holds open to the database `env` points at (for tests and metrics). */
export function openConnectionCount(env: DbEnv): number {
  return env.DATABASE_URL ? gateFor(targetOf(env)).open : 0;
}

/** True for errors that mean "Postgres is down, try later"; these have already been logged. */
export function isPostgresUnavailable(error: unknown): error is PostgresUnavailableError {
  return error instanceof PostgresUnavailableError;
}

// ---- internals ---------------------------------------------------------------------------------

interface DatabaseLimits extends GateLimits {
  connectTimeoutMs: number;
  queryTimeoutMs: number;
  idleCloseMs: number;
}

const batches = new AsyncLocalStorage<DbBatch>();
/** One gate per database target: the bound and the breaker are per server, shared by the isolate. */
const gates = new Map<string, ConnectionGate>();

function targetOf(env: DbEnv): ConnectionTarget {
  return { databaseUrl: env.DATABASE_URL ?? "", wsProxy: env.EDGECLAW_PG_WS_PROXY };
}

function targetKey(target: ConnectionTarget): string {
  return `${target.databaseUrl}|${target.wsProxy ?? ""}`;
}

function gateFor(target: ConnectionTarget): ConnectionGate {
  const key = targetKey(target);
  let gate = gates.get(key);
  if (!gate)
    gates.set(
      key,
      (gate = new ConnectionGate(target.wsProxy ? `Postgres (via ${target.wsProxy})` : "Postgres")),
    );
  return gate;
}

function limitsFor(env: DbEnv): DatabaseLimits {
  // Only the `database` section: the client never loads the rest of the config (nor any channel).
  const database = configFromEnvWith(databaseSchema, env, "database");
  // A holder touches its slot whenever a query starts or ends; silence longer than one connect, one
  // query and the idle close together (plus slack) means its object is gone.
  return {
    ...database,
    leaseMs: database.connectTimeoutMs + database.queryTimeoutMs + database.idleCloseMs + 5_000,
  };
}

/** A connection shared by the `withDb` calls of one batch. */
class DbBatch {
  private readonly target: ConnectionTarget;
  private readonly key: string;
  private readonly limits: DatabaseLimits;
  private held: Promise<{ connection: PgConnection; permit: Permit }> | null = null;
  private users = 0;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private ended = false;

  constructor(
    env: DbEnv,
    private readonly idleCloseMs: number,
  ) {
    this.target = targetOf(env);
    this.key = targetKey(this.target);
    this.limits = limitsFor(env);
  }

  /** Work started after the batch ended (a background promise that inherited it) gets its own. */
  serves(env: DbEnv): boolean {
    return !this.ended && targetKey(targetOf(env)) === this.key;
  }

  async run<T>(work: (db: Db) => Promise<T>): Promise<T> {
    this.users++;
    clearTimeout(this.idleTimer);
    try {
      const { connection, permit } = await this.acquire();
      permit.touch();
      try {
        return await work(connection.db);
      } catch (error) {
        if (!connection.broken && !isTransportFailure(error)) throw error;
        this.drop();
        throw gateFor(this.target).failed(connection.failure ?? error, this.limits);
      }
    } finally {
      this.users--;
      void this.held?.then(
        ({ permit }) => permit.touch(),
        () => undefined,
      );
      if (this.users === 0 && this.idleCloseMs > 0 && !this.ended)
        this.idleTimer = setTimeout(() => this.drop(), this.idleCloseMs);
    }
  }

  end(): void {
    this.ended = true;
    clearTimeout(this.idleTimer);
    this.drop();
  }

  private acquire(): Promise<{ connection: PgConnection; permit: Permit }> {
    if (this.held) return this.held;
    const gate = gateFor(this.target);
    const held = (async () => {
      const permit = await gate.acquire(this.limits);
      try {
        const connection = await openConnection(this.target, this.limits);
        gate.succeeded();
        return { connection, permit };
      } catch (error) {
        permit.release();
        throw gate.failed(error, this.limits);
      }
    })();
    this.held = held;
    // A failed open is not kept: the next call asks the gate again (which may fail fast).
    held.catch(() => {
      if (this.held === held) this.held = null;
    });
    return held;
  }

  /** Closes the connection (if any) and gives its slot back. */
  private drop(): void {
    const held = this.held;
    if (!held) return;
    this.held = null;
    held.then(
      // The slot is free once the server has seen the socket go, not when we asked it to.
      ({ connection, permit }) => connection.close().finally(() => permit.release()),
      () => undefined,
    );
  }
}
