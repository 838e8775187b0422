import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from "node:fs";
import { basename, join } from "node:path";
import { spawn } from "node:child_process";
import { setFlagsFromString } from "node:v8";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { startPgBridge, type PgBridge } from "./pg-bridge.ts";
import { startPgliteServer } from "./pglite-server.ts";

export const migrationsFolder = fileURLToPath(new URL("../../migrations", import.meta.url));
/**
 * Where node_modules is. (No import.meta.resolve: vitest's module runner, which loads this file for
 * the workerd tests' global setup, does not support it.)
 */
const projectRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Postgres settings for one developer's gateway: PGlite keeps Postgres's server defaults
 * (shared_buffers 128 MB, sized for a shared server) and its WASM heap never gives pages back, so
 * they become resident as the buffer pool fills. A few hundred sessions' index, transcripts and
 * usage fit in 16 MB of buffers with room to spare; the rest is read through the OS page cache.
 */
export const LOCAL_POSTGRES_SETTINGS: Record<string, string> = {
  shared_buffers: "16MB",
  work_mem: "1MB",
  maintenance_work_mem: "8MB",
  temp_buffers: "1MB",
  wal_buffers: "512kB",
};

function startParams(): string[] {
  return [
    ...PGlite.defaultStartParams,
    ...Object.entries(LOCAL_POSTGRES_SETTINGS).flatMap(([name, value]) => [
      "-c",
      `${name}=${value}`,
    ]),
  ];
}

/**
 * A new data dir is made by initdb, which PGlite runs as a second WASM instance in the same
 * process; V8 keeps that memory (~500 MB resident) for the life of the process, and even a worker
 * thread gives only part of it back. A short-lived node process does it instead, so the long-lived
 * one holds only the server it serves from. It also applies the migrations (unless told not to), so
 * the template (migratedTemplate) is a migrated database, and can write PGlite's dump of it.
 */
async function initDataDirInChild(
  dataDir: string,
  options: { migrations: boolean; dumpTo?: string },
): Promise<void> {
  // Bare names, resolved from the child's working directory: the project root.
  const script = `const { PGlite } = await import("@electric-sql/pglite");
const { vector } = await import("@electric-sql/pglite-pgvector");
const { drizzle } = await import("drizzle-orm/pglite");
const { migrate } = await import("drizzle-orm/pglite/migrator");
const db = await PGlite.create(process.argv[1], { extensions: { vector } });
if (process.argv[2]) await migrate(drizzle(db), { migrationsFolder: process.argv[2] });
if (process.argv[3]) {
  const dump = await db.dumpDataDir("none");
  (await import("node:fs")).writeFileSync(process.argv[3], new Uint8Array(await dump.arrayBuffer()));
}
await db.close();`;
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      script,
      dataDir,
      options.migrations ? migrationsFolder : "",
      options.dumpTo ?? "",
    ],
    { cwd: projectRoot, stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  if (code !== 0)
    throw new Error(
      `initialising Postgres in ${dataDir} failed (exit ${code}): ${stderr.trim().slice(-2000)}`,
    );
}

/** The version of an installed package (node_modules/<name>/package.json, as imports here find it). */
function packageVersion(name: string): string {
  const manifest = join(projectRoot, "node_modules", name, "package.json");
  if (!existsSync(manifest)) return "unknown";
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version ?? "unknown";
}

/**
 * A fresh data directory is a copy of one initialised once per installed PGlite (+ pgvector):
 * initdb is most of a first `npm run dev` — about 37 of 40 s on a loaded 2-core machine, where
 * starting an existing directory takes about 1 s — and every benchmark and dev-stack test starts in
 * a fresh one. The template is cleanly shut down (the child closes it), so a copy is a valid data
 * directory; it lives under node_modules/.cache (gone with `npm ci`) and is keyed by both versions
 * (the on-disk format). Two processes building it at once each build a private copy; the first
 * rename wins. The template is migrated too, and keyed by the migrations as well: applying them to
 * a new database took 1.5–6 s of a start at load 20 (0.1–0.2 s to find them applied). Migrations
 * still run on every start, as before, so a copy is brought up to date whatever it holds. A new
 * key removes the templates of other migrations (40 MB each; a branch switch builds one again).
 * Beside the folder, PGlite's dump of it (`<template>.tar`), which an in-memory database loads.
 */
async function migratedTemplate(): Promise<{ dir: string; dump: string }> {
  const prefix = `pglite-${packageVersion("@electric-sql/pglite")}-vector-${packageVersion("@electric-sql/pglite-pgvector")}`;
  const cache = join(projectRoot, "node_modules", ".cache", "edgeclaw");
  const template = join(cache, `${prefix}-migrations-${migrationsDigest()}`);
  const dump = `${template}.tar`;
  if (!existsSync(join(template, "PG_VERSION")) || !existsSync(dump)) {
    const building = `${template}.${process.pid}.building`;
    rmSync(building, { recursive: true, force: true });
    mkdirSync(building, { recursive: true });
    await initDataDirInChild(building, { migrations: true, dumpTo: `${building}.tar` });
    // The dump first: a template folder that exists always has its dump beside it.
    renameSync(`${building}.tar`, dump);
    try {
      renameSync(building, template);
    } catch {
      // Another process finished its template first; ours is not needed.
      rmSync(building, { recursive: true, force: true });
    }
    // Another process's template being built (`.building`) is left to it.
    const current = [basename(template), basename(dump)];
    for (const name of readdirSync(cache))
      if (name.startsWith("pglite-") && !name.includes(".building") && !current.includes(name))
        rmSync(join(cache, name), { recursive: true, force: true });
  }
  return { dir: template, dump };
}

/** The migrations a template holds: every file of the folder, by name and content. */
function migrationsDigest(): string {
  const hash = createHash("sha256");
  for (const entry of readdirSync(migrationsFolder, { recursive: true, withFileTypes: true })
    .filter((file) => file.isFile())
    .map((file) => join(file.parentPath, file.name))
    .sort()) {
    hash.update(`${entry.slice(migrationsFolder.length)}\0`);
    hash.update(readFileSync(entry));
  }
  return hash.digest("hex").slice(0, 16);
}

export interface LocalPostgres {
  /** Connection string the Neon driver uses (through the WebSocket bridge). */
  databaseUrl: string;
  /** host:port of the WebSocket-to-TCP bridge, for `neonConfig.wsProxy`. */
  wsProxy: string;
  pgPort: number;
  db: PGlite;
  /** Another bridge to the same database (tests: one they may freeze or kill without disturbing others). */
  addBridge(options?: { control?: boolean }): Promise<PgBridge>;
  stop(): Promise<void>;
}

/**
 * Postgres with nothing to install: PGlite (WASM Postgres) behind a TCP socket server (pglite-server.ts), plus a small
 * WebSocket bridge so the Neon serverless driver — the one production uses — reaches it from workerd.
 * `dataDir` undefined keeps everything in memory (tests); a folder keeps it across restarts (dev).
 */
/**
 * PGlite is a 9 MB WASM module. V8 compiles it with its baseline compiler and then recompiles hot
 * functions with the optimising one, keeping both: ~50 MB more resident, and the recompiling costs
 * more CPU than it saves over a dev session (measured: 1.2 s vs 2.0 s CPU for 2,300 queries, same
 * wall time). Baseline only, set before the module is compiled; nothing else in these processes
 * runs WASM.
 */
setFlagsFromString("--liftoff-only");

export async function startLocalPostgres(
  options: {
    dataDir?: string;
    host?: string /** false: leave the database empty (tests of other migrators). */;
    migrate?: boolean;
  } = {},
): Promise<LocalPostgres> {
  const host = options.host ?? "127.0.0.1";
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    if (!existsSync(join(options.dataDir, "PG_VERSION"))) {
      // The template is migrated: a database left empty is made on its own.
      if (options.migrate === false)
        await initDataDirInChild(options.dataDir, { migrations: false });
      else cpSync((await migratedTemplate()).dir, options.dataDir, { recursive: true });
    }
  }
  // In memory (the workerd tests' Postgres, one per shard): loaded from the template's dump instead
  // of an initdb and every migration in this process (about 8-10 s at load 20).
  const loadDataDir =
    !options.dataDir && options.migrate !== false
      ? new Blob([readFileSync((await migratedTemplate()).dump)])
      : undefined;
  // pgvector (memory search embeddings); Neon ships it, and the migration creates the extension.
  const db = await PGlite.create(options.dataDir, {
    startParams: startParams(),
    extensions: { vector },
    ...(loadDataDir ? { loadDataDir } : {}),
  });
  if (options.migrate !== false) await migrate(drizzle(db), { migrationsFolder });

  const pgServer = await startPgliteServer({ db, host, maxConnections: 64 });
  const pgPort = pgServer.port;

  const bridge = await startPgBridge({ host, pgPort });
  const extras: PgBridge[] = [];

  return {
    databaseUrl: `postgres://postgres:postgres@${host}:${pgPort}/postgres`,
    wsProxy: bridge.wsProxy,
    pgPort,
    db,
    async addBridge(bridgeOptions) {
      const extra = await startPgBridge({ host, pgPort, ...bridgeOptions });
      extras.push(extra);
      return extra;
    },
    async stop() {
      for (const extra of extras) await extra.stop();
      await bridge.stop();
      await pgServer.stop();
      await db.close();
    },
  };
}
