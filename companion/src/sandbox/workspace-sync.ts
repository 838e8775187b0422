import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import type { FileChange, SyncFile } from "../../../functions/sandbox/wire.ts";

/**
 * The workspace of one sandbox scope on the host's disk, kept in step with Postgres (the record):
 * before a command the session's files are written in (syncIn), after it what the command changed
 * is read back (scanChanges). A manifest beside the workspace (outside the sandbox's view) holds
 * each file's version and hash as last synced, which is how a change is told from an unchanged file.
 *
 * The command controls the workspace, so the host never follows a link in it: writes open with
 * O_NOFOLLOW after removing any symlink on the way, and the scan skips symlinks, so a link to
 * /etc/passwd or the host's home is neither read back nor written through.
 */

interface ManifestEntry {
  version: number;
  sha: string;
}
type Manifest = Record<string, ManifestEntry>;

const SKIPPED_DIRS = new Set(["node_modules", ".git"]);
const MAX_FILE_BYTES = 1024 * 1024;

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function manifestPath(scopeDir: string): string {
  return join(scopeDir, "manifest.json");
}

function readManifest(scopeDir: string): Manifest {
  try {
    return JSON.parse(readFileSync(manifestPath(scopeDir), "utf8")) as Manifest;
  } catch {
    return {};
  }
}

function writeManifest(scopeDir: string, manifest: Manifest): void {
  const temp = `${manifestPath(scopeDir)}.tmp`;
  writeFileSync(temp, JSON.stringify(manifest));
  renameSync(temp, manifestPath(scopeDir));
}

/** `a/b.txt` inside the workspace, or undefined for anything that could leave it. */
function safeRelative(path: string): string | undefined {
  const parts = path.split("/");
  if (!path || path.startsWith("/") || parts.some((p) => p === ".." || p === "." || p === ""))
    return undefined;
  return parts.join(sep);
}

/** Writes `content` at `rel` under `root` without following a symlink anywhere on the path. */
function writeNoFollow(root: string, rel: string, content: string): void {
  const parts = rel.split(sep);
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = join(dir, part);
    const stat = existsOrUndefined(dir);
    if (stat && !stat.isDirectory()) unlinkSync(dir);
    if (!stat?.isDirectory()) mkdirSync(dir);
  }
  const file = join(root, rel);
  const stat = existsOrUndefined(file);
  if (stat && (stat.isSymbolicLink() || !stat.isFile()))
    rmSync(file, { recursive: true, force: true });
  const fd = openSync(
    file,
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
    0o644,
  );
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
}

function existsOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** Reads a regular file (never through a link) as UTF-8 text, or undefined if it is not text. */
function readText(path: string): string | undefined {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const bytes = readFileSync(fd);
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return text.includes("\u0000") ? undefined : text;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

export interface SyncInResult {
  /** Local copies that differed from both Postgres and the last sync: saved as `<path>.conflict`. */
  conflicts: string[];
}

/**
 * Brings the workspace to Postgres's state: files whose content differs are written, files
 * Postgres no longer has are removed (if the sandbox did not change them since). Postgres wins a
 * conflict; the sandbox's differing copy is kept beside it as `<path>.conflict`, never lost.
 */
export function syncIn(scopeDir: string, workspaceDir: string, files: SyncFile[]): SyncInResult {
  mkdirSync(workspaceDir, { recursive: true });
  const manifest = readManifest(scopeDir);
  const next: Manifest = {};
  const conflicts: string[] = [];
  for (const file of files) {
    const rel = safeRelative(file.path);
    if (!rel) continue;
    const sha = sha256(file.content);
    next[file.path] = { version: file.version, sha };
    const full = join(workspaceDir, rel);
    const stat = existsOrUndefined(full);
    const local = stat?.isFile() ? readText(full) : undefined;
    const localSha = local === undefined ? undefined : sha256(local);
    if (localSha === sha) continue;
    const known = manifest[file.path];
    if (local !== undefined && known && localSha !== known.sha) {
      writeNoFollow(workspaceDir, `${rel}.conflict`, local);
      conflicts.push(file.path);
    }
    writeNoFollow(workspaceDir, rel, file.content);
  }
  for (const [path, entry] of Object.entries(manifest)) {
    if (next[path]) continue;
    const rel = safeRelative(path);
    if (!rel) continue;
    const full = join(workspaceDir, rel);
    const stat = existsOrUndefined(full);
    if (!stat?.isFile()) continue;
    const local = readText(full);
    if (local !== undefined && sha256(local) === entry.sha) unlinkSync(full);
  }
  writeManifest(scopeDir, next);
  return { conflicts };
}

export interface ScanResult {
  changes: FileChange[];
  skipped: string[];
}

/**
 * What changed under the workspace since the last sync, bounded: at most `maxFiles` changed files
 * and `maxBytes` of content; larger, binary and linked files are listed in `skipped`. The manifest
 * then records the new hashes, so the same change is not reported twice.
 */
export function scanChanges(
  scopeDir: string,
  workspaceDir: string,
  bounds: { maxFiles: number; maxBytes: number },
): ScanResult {
  const manifest = readManifest(scopeDir);
  const changes: FileChange[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(dir, entry.name);
      const rel = relative(workspaceDir, full).split(sep).join("/");
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(full);
        continue;
      }
      if (!entry.isFile()) continue;
      seen.add(rel);
      const stat = lstatSync(full);
      const known = manifest[rel];
      if (stat.size > MAX_FILE_BYTES) {
        skipped.push(`${rel} (over 1 MiB)`);
        continue;
      }
      const text = readText(full);
      if (text === undefined) {
        skipped.push(`${rel} (not UTF-8 text)`);
        continue;
      }
      const sha = sha256(text);
      if (known?.sha === sha) continue;
      if (changes.length >= bounds.maxFiles || bytes + stat.size > bounds.maxBytes) {
        skipped.push(`${rel} (over agents.defaults.sandbox.sync bounds)`);
        continue;
      }
      bytes += stat.size;
      changes.push({ path: rel, content: text, baseVersion: known?.version ?? 0 });
      manifest[rel] = { version: known?.version ?? 0, sha };
    }
  };
  walk(workspaceDir);
  for (const [path, entry] of Object.entries(manifest)) {
    if (seen.has(path)) continue;
    changes.push({ path, content: null, baseVersion: entry.version });
    delete manifest[path];
  }
  mkdirSync(dirname(manifestPath(scopeDir)), { recursive: true });
  writeManifest(scopeDir, manifest);
  return { changes, skipped };
}
