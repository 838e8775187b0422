import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/neon-serverless";
import { migrate } from "drizzle-orm/neon-serverless/migrator";
import { migrationsFolder } from "./local-postgres.ts";
import { withNeonPool } from "./neon-node.ts";

export interface MigrationOutcome {
  /** Migrations recorded in drizzle's journal table before and after this run. */
  before: number;
  after: number;
}

/**
 * Applies the drizzle migrations in migrations/ over the same driver the Worker uses (the Neon
 * serverless driver, WebSockets). `wsProxy` (host:port) points it at the local PGlite bridge instead
 * of Neon, which is how this path is exercised offline.
 */
export async function migrateDatabase(
  databaseUrl: string,
  options: { wsProxy?: string } = {},
): Promise<MigrationOutcome> {
  return withNeonPool(databaseUrl, options.wsProxy, async (pool) => {
    const db = drizzle({ client: pool });
    const before = await appliedCount(db);
    await migrate(db, { migrationsFolder });
    return { before, after: await appliedCount(db) };
  });
}

export interface PendingMigrations {
  applied: number;
  /** Tags (file names) of the migrations a deploy would apply, oldest first. */
  pending: string[];
}

/** What a deploy would apply, read without writing anything (for `deploy --dry-run`). */
export async function pendingMigrations(
  databaseUrl: string,
  options: { wsProxy?: string } = {},
): Promise<PendingMigrations> {
  const journal = JSON.parse(
    readFileSync(join(migrationsFolder, "meta", "_journal.json"), "utf8"),
  ) as { entries: Array<{ tag: string }> };
  const applied = await withNeonPool(databaseUrl, options.wsProxy, (pool) =>
    appliedCount(drizzle({ client: pool })),
  );
  return { applied, pending: journal.entries.slice(applied).map((entry) => entry.tag) };
}

async function appliedCount(db: ReturnType<typeof drizzle>): Promise<number> {
  const table = await db.execute<{ present: boolean }>(
    sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`,
  );
  if (!table.rows[0]?.present) return 0;
  const rows = await db.execute<{ n: number }>(
    sql`select count(*)::int as n from drizzle.__drizzle_migrations`,
  );
  return rows.rows[0]?.n ?? 0;
}

/** `user:password@host/db` with the password blanked, for messages. */
export function redactDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = "***";
    return `${url.protocol}//${url.username ? `${url.username}${url.password ? ":***" : ""}@` : ""}${url.host}${url.pathname}`;
  } catch {
    return "(unparseable DATABASE_URL)";
  }
}
