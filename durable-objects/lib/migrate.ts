/**
 * The one schema migrator every Durable Object with SQLite tables uses: an ordered list of
 * versioned steps. An object records the version it has reached; on start-up every later step runs
 * once, in order, in one transaction together with the version bump, so an object is never left
 * half-migrated and no step runs twice. Objects live for months: a step, once released, is never
 * edited — change the schema by appending a step (docs/contributing.md, "add a DO migration").
 */

export interface SchemaMigration {
  /** 1, 2, 3, … with no gaps: the step runs on objects whose stored version is below it. */
  version: number;
  /** Why the step exists (shows up in the log line when it is applied). */
  why: string;
  statements: string[];
}

/** The part of DurableObjectStorage a migration needs. */
export interface SchemaHost {
  sql: SqlStorage;
  transactionSync<T>(work: () => T): T;
}

/** Where an object keeps the version it has reached. */
export interface VersionRecord {
  /** 0 for a new object (or one from before versioning). */
  read(sql: SqlStorage): number;
  /** Runs inside the migration's transaction, after the steps. */
  write(sql: SqlStorage, version: number): void;
}

export interface VersionedSchema {
  /** The object's class, for the log line and the rollback error. */
  name: string;
  migrations: readonly SchemaMigration[];
  /** Defaults to schemaVersionsRecord(name). */
  record?: VersionRecord;
  /**
   * The schema at its last version in one go, for a new object (version 0 and `absentTable` not
   * there): creating it costs rows written, and replaying every step (a table rebuilt, a column
   * added and dropped) costs more with each step appended. It must leave the tables exactly as the
   * steps do; the owner's test compares the two.
   */
  fresh?: { absentTable: string; statements: readonly string[] };
}

function hasTable(sql: SqlStorage, name: string): boolean {
  return (
    sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, name).toArray()
      .length > 0
  );
}

/**
 * The default record: the schema's row in a `schema_versions` table of the object's own, keyed by
 * the schema's name (two schemas can share one object's storage: CompanionDO and its keeper).
 */
export function schemaVersionsRecord(name: string): VersionRecord {
  return {
    read(sql) {
      if (!hasTable(sql, "schema_versions")) return 0;
      const row = sql
        .exec<{ version: number }>(`SELECT version FROM schema_versions WHERE name = ?`, name)
        .toArray()[0];
      return row?.version ?? 0;
    },
    write(sql, version) {
      sql.exec(
        `CREATE TABLE IF NOT EXISTS schema_versions (name TEXT PRIMARY KEY, version INTEGER NOT NULL)`,
      );
      sql.exec(
        `INSERT INTO schema_versions(name, version) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET version = excluded.version`,
        name,
        version,
      );
    },
  };
}

/** A record kept as one key of a key/value table the schema itself creates (the SessionDO's meta). */
export function keyValueVersionRecord(table: string, key: string): VersionRecord {
  return {
    read(sql) {
      if (!hasTable(sql, table)) return 0;
      const row = sql
        .exec<{ value: string }>(`SELECT value FROM ${table} WHERE key = ?`, key)
        .toArray()[0];
      return row ? Number(row.value) : 0;
    },
    write(sql, version) {
      sql.exec(
        `INSERT INTO ${table}(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
        key,
        String(version),
      );
    },
  };
}

/**
 * Applies every step above the stored version, in one transaction, and returns the version the
 * object is at. Cheap when there is nothing to do (one look-up), so it runs on every construction.
 */
export function migrate(host: SchemaHost, schema: VersionedSchema): number {
  const record = schema.record ?? schemaVersionsRecord(schema.name);
  const from = record.read(host.sql);
  const target = schema.migrations.at(-1)?.version ?? 0;
  if (from === target) return from;
  if (from > target) {
    // Code older than the data (a rollback): refuse rather than write rows the schema does not expect.
    throw new Error(
      `${schema.name} schema version ${from} is newer than this code knows (${target})`,
    );
  }
  const fresh = from === 0 && schema.fresh && !hasTable(host.sql, schema.fresh.absentTable);
  host.transactionSync(() => {
    if (fresh) for (const statement of schema.fresh!.statements) host.sql.exec(statement);
    else
      for (const step of schema.migrations) {
        if (step.version <= from) continue;
        for (const statement of step.statements) host.sql.exec(statement);
      }
    record.write(host.sql, target);
  });
  if (from > 0) console.log(`${schema.name} schema migrated from version ${from} to ${target}`);
  return target;
}
