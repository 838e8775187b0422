import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/**
 * The local Worker's bundle, kept from one `npm run dev` start to the next while nothing it was
 * built from changed: `wrangler deploy --dry-run` is most of a start (about 5 of 8 s on a loaded
 * 2-core machine), and a restart, a second stack or a test's stack usually bundles the same code
 * with the same config.
 *
 * An entry is keyed by what reaches esbuild besides the source files — the defines (the bundled
 * config and workspace), wrangler.toml, tsconfig.json, package.json and package-lock.json (which
 * pins wrangler and esbuild) — and holds the hash of every file esbuild read (its metafile's
 * inputs). It is used only while each of those files still has that content, so an edit, a
 * `git checkout` or an `npm install` rebuilds. A build whose inputs changed while it ran (a save
 * mid-build) is not kept. EDGECLAW_DEV_BUILD_CACHE=0 turns it off.
 */
const KEPT_ENTRIES = 8;
const KEY_FILES = ["wrangler.toml", "tsconfig.json", "package.json", "package-lock.json"];
/** The entry's record: its inputs' hashes and what the build derived from the key files. */
const RECORD_FILE = "record.json";
/** A half-written entry older than this was left by a start that was killed. */
const ABANDONED_MS = 10 * 60_000;

export interface WorkerBundleCache<Derived> {
  /** Copies a current entry's files into `outDir` and returns what was stored with them, else undefined. */
  restore(outDir: string): Derived | undefined;
  /**
   * Keeps what a build that started at `startedAt` (ms) wrote to `outDir`, per esbuild's metafile,
   * with `derived`: what the build worked out from the key files alone (the Worker's bindings).
   */
  store(outDir: string, metafile: string, startedAt: number, derived: Derived): void;
}

interface CacheRecord<Derived> {
  inputs: Record<string, string>;
  derived: Derived;
}

function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

function read(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

/**
 * esbuild's metafile: the files it read and wrote. Not files: `namespace:` entries (node built-ins)
 * and `<define:NAME>` (the defines, part of the key).
 */
function readMetafile(metafile: string): { inputs: string[]; outputs: string[] } {
  const parsed = JSON.parse(readFileSync(metafile, "utf8")) as {
    inputs: Record<string, unknown>;
    outputs: Record<string, unknown>;
  };
  return {
    inputs: Object.keys(parsed.inputs).filter((input) => !/^([a-z-]+:|<.*>$)/.test(input)),
    outputs: Object.keys(parsed.outputs),
  };
}

export function workerBundleCache<Derived>(
  projectDir: string,
  defines: string[],
  env: NodeJS.ProcessEnv = process.env,
): WorkerBundleCache<Derived> | undefined {
  if (env.EDGECLAW_DEV_BUILD_CACHE === "0") return undefined;
  const root = join(projectDir, "node_modules", ".cache", "edgeclaw", "worker-bundles");
  const key = sha256(
    JSON.stringify([defines, ...KEY_FILES.map((file) => read(join(projectDir, file)))]),
  );
  const entry = join(root, key);

  /** The entry's record while every input still has the content it was built from. */
  const current = (): CacheRecord<Derived> | undefined => {
    try {
      const record = JSON.parse(
        readFileSync(join(entry, RECORD_FILE), "utf8"),
      ) as CacheRecord<Derived>;
      const unchanged = Object.entries(record.inputs).every(([input, hash]) => {
        const path = resolve(projectDir, input);
        return existsSync(path) && sha256(readFileSync(path)) === hash;
      });
      return unchanged ? record : undefined;
    } catch {
      return undefined;
    }
  };

  return {
    restore(outDir) {
      const record = current();
      if (!record) return undefined;
      try {
        mkdirSync(outDir, { recursive: true });
        for (const file of readdirSync(entry))
          if (file !== RECORD_FILE) copyFileSync(join(entry, file), join(outDir, file));
        const now = new Date();
        utimesSync(entry, now, now);
        return record.derived;
      } catch {
        // Replaced or pruned by another start meanwhile: build instead.
        return undefined;
      }
    },
    store(outDir, metafile, startedAt, derived) {
      let meta: ReturnType<typeof readMetafile>;
      const inputs: Record<string, string> = {};
      try {
        meta = readMetafile(metafile);
        for (const input of meta.inputs) {
          const path = resolve(projectDir, input);
          // Saved while esbuild ran: the bundle may hold the old text, so it is not kept.
          if (statSync(path).mtimeMs >= startedAt) return;
          inputs[input] = sha256(readFileSync(path));
        }
      } catch (error) {
        // The build stands; only the next start builds again.
        console.warn(`edgeclaw dev: the Worker's bundle is not kept for the next start: ${error}`);
        return;
      }
      const building = `${entry}.${process.pid}.building`;
      try {
        rmSync(building, { recursive: true, force: true });
        mkdirSync(building, { recursive: true });
        for (const output of meta.outputs) {
          const path = resolve(projectDir, output);
          if (dirname(path) !== resolve(outDir)) throw new Error(`${output} is not in ${outDir}`);
          copyFileSync(path, join(building, basename(path)));
        }
        const record: CacheRecord<Derived> = { inputs, derived };
        writeFileSync(join(building, RECORD_FILE), JSON.stringify(record));
        rmSync(entry, { recursive: true, force: true });
        renameSync(building, entry);
      } catch {
        // Another start stored the same entry first, or esbuild wrote into a subfolder: not kept.
        rmSync(building, { recursive: true, force: true });
      }
      prune(root);
    },
  };
}

/** Keeps the most recently used entries, and drops what a killed start left half-written. */
function prune(root: string): void {
  const entries: { name: string; used: number }[] = [];
  for (const name of readdirSync(root)) {
    try {
      entries.push({ name, used: statSync(join(root, name)).mtimeMs });
    } catch {
      // Removed meanwhile.
    }
  }
  const building = entries.filter((entry) => entry.name.endsWith(".building"));
  for (const left of building)
    if (left.used < Date.now() - ABANDONED_MS)
      rmSync(join(root, left.name), { recursive: true, force: true });
  const kept = entries
    .filter((entry) => !entry.name.endsWith(".building"))
    .sort((a, b) => b.used - a.used);
  for (const stale of kept.slice(KEPT_ENTRIES))
    rmSync(join(root, stale.name), { recursive: true, force: true });
}
