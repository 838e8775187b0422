// Runs one of the project's TypeScript entry points (the CLI, `npm run dev`) as a single esbuild
// bundle kept between runs. Through tsx every start compiles-or-looks-up and resolves each of the
// ~250 files an entry imports through loader hooks: about 2.5 s for `edgeclaw --help` on a quiet
// 2-core machine, against 0.5 s for the bundle. Plain JavaScript, so nothing has to be loaded
// before it can run.
//
// An entry's bundle is rebuilt (about a second) when any file it was built from changes, or a file
// is added to or removed from a folder holding one (a template-literal import such as each
// channel's `cli.ts` takes every match): the record beside it holds the hash of every input
// esbuild read and of those folders' listings, and package-lock.json, tsconfig.json and this file
// are part of the key. EDGECLAW_NODE_BUNDLE=0 runs the entry through
// tsx instead (no cache; what `node --import tsx <entry>` does).
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const projectRoot = fileURLToPath(new URL("../..", import.meta.url));
const KEY_FILES = ["package-lock.json", "tsconfig.json"];
const ownSource = readFileSync(fileURLToPath(import.meta.url));
/** A bundle another process may still be importing is left this long after it was replaced. */
const REPLACED_KEPT_MS = 10 * 60_000;

function sha256(data) {
  return createHash("sha256").update(data).digest("hex");
}

function readOr(path, fallback) {
  try {
    return readFileSync(path);
  } catch {
    return fallback;
  }
}

function cacheRoot(root) {
  return join(root, "node_modules", ".cache", "edgeclaw", "node-bundles");
}

/** The entry's cache folder: one per entry and state of the key files. */
function entryDir(root, entry) {
  const key = sha256(
    JSON.stringify([
      relative(root, entry),
      process.versions.node.split(".")[0],
      sha256(ownSource),
      ...KEY_FILES.map((file) => sha256(readOr(join(root, file), ""))),
    ]),
  ).slice(0, 16);
  return join(cacheRoot(root), `${basename(entry).replace(/\.[cm]?ts$/, "")}-${key}`);
}

/** A folder's entries (not node_modules, which holds this cache and only external packages). */
function listing(root, folder) {
  const names = readdirSync(resolve(root, folder)).filter((name) => name !== "node_modules");
  return sha256(names.sort().join("\n"));
}

/** The bundle named by the entry's record while every input and folder it lists is unchanged. */
function currentBundle(root, dir) {
  try {
    const record = JSON.parse(readFileSync(join(dir, "record.json"), "utf8"));
    for (const [input, hash] of Object.entries(record.inputs)) {
      if (sha256(readFileSync(resolve(root, input))) !== hash) return undefined;
    }
    for (const [folder, hash] of Object.entries(record.folders)) {
      if (listing(root, folder) !== hash) return undefined;
    }
    const bundle = join(dir, record.bundle);
    return existsSync(bundle) ? bundle : undefined;
  } catch {
    return undefined;
  }
}

/**
 * In a bundle every module's `import.meta.url` would be the bundle's own; the project's code finds
 * files beside it that way (migrations, the companion, helper scripts), so each source file gets its
 * own URL written in. Packages stay outside the bundle and keep theirs.
 */
const ownImportMeta = {
  name: "own-import-meta",
  setup(build) {
    build.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
      if (args.path.includes("/node_modules/")) return undefined;
      const source = readFileSync(args.path, "utf8");
      if (!source.includes("import.meta.")) return undefined;
      const url = pathToFileURL(args.path).href;
      const contents = source
        .replaceAll("import.meta.url", JSON.stringify(url))
        .replaceAll("import.meta.filename", JSON.stringify(args.path))
        .replaceAll("import.meta.dirname", JSON.stringify(resolve(args.path, "..")));
      return { contents, loader: /\.[cm]?ts$/.test(args.path) ? "ts" : "js" };
    });
  },
};

async function build(root, entry, dir) {
  const esbuild = await import("esbuild");
  const startedAt = Date.now();
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: `node${process.versions.node.split(".")[0]}`,
    packages: "external",
    sourcemap: "inline",
    sourcesContent: false,
    write: false,
    metafile: true,
    logLevel: "warning",
    absWorkingDir: root,
    outfile: join(dir, "bundle.mjs"),
    plugins: [ownImportMeta],
  });
  // esbuild's service process would otherwise stay beside the entry for as long as it runs (57 MiB
  // beside `npm run dev`).
  await esbuild.stop();
  const code = result.outputFiles[0].contents;
  const inputs = {};
  const folders = {};
  let savedMidBuild = false;
  // Not files: `namespace:` entries and `<define:…>`.
  const files = Object.keys(result.metafile.inputs).filter(
    (input) => !/^([a-z-]+:|<.*>$)/.test(input),
  );
  for (const input of files) {
    const path = resolve(root, input);
    if (statSync(path).mtimeMs >= startedAt) savedMidBuild = true;
    inputs[input] = sha256(readFileSync(path));
    const folder = relative(root, resolve(path, "..")) || ".";
    folders[folder] ??= listing(root, folder);
  }
  mkdirSync(dir, { recursive: true });
  const name = `bundle-${sha256(code).slice(0, 16)}.mjs`;
  const bundle = join(dir, name);
  // Written under a private name and renamed: a second start building at once never reads half a file.
  const temporary = `${bundle}.${process.pid}.tmp`;
  writeFileSync(temporary, code);
  renameSync(temporary, bundle);
  // A file saved while esbuild read it may be in the bundle in either version: used once, not kept.
  if (savedMidBuild) return bundle;
  const record = join(dir, `record.json.${process.pid}.tmp`);
  writeFileSync(record, JSON.stringify({ bundle: name, inputs, folders }));
  renameSync(record, join(dir, "record.json"));
  pruneReplaced(cacheRoot(root), dir, name);
  return bundle;
}

/** Removes bundles of this entry that newer builds replaced a while ago, and older key states. */
function pruneReplaced(entries, dir, kept) {
  const now = Date.now();
  for (const file of readdirSync(dir)) {
    if (file === kept || file === "record.json") continue;
    const path = join(dir, file);
    if (now - statSync(path).mtimeMs > REPLACED_KEPT_MS) rmSync(path, { force: true });
  }
  const name = basename(dir).replace(/-[0-9a-f]{16}$/, "");
  for (const sibling of readdirSync(entries)) {
    const path = join(entries, sibling);
    const sameEntry = sibling.replace(/-[0-9a-f]{16}$/, "") === name;
    if (sameEntry && path !== dir && now - statSync(path).mtimeMs > REPLACED_KEPT_MS)
      rmSync(path, { recursive: true, force: true });
  }
}

/**
 * The path of a current bundle of `entry` (a path relative to `root`, the project by default),
 * built if needed; `built` says whether this call built it.
 */
export async function bundledEntry(entry, root = projectRoot) {
  const absolute = resolve(root, entry);
  const dir = entryDir(root, absolute);
  const current = currentBundle(root, dir);
  if (current) return { path: current, built: false };
  return { path: await build(root, absolute, dir), built: true };
}

/** Runs `entry` (a path relative to the project) from its bundle, or through tsx with EDGECLAW_NODE_BUNDLE=0. */
export async function runEntry(entry) {
  if (process.env.EDGECLAW_NODE_BUNDLE === "0") {
    const { register } = await import("tsx/esm/api");
    register();
    await import(pathToFileURL(resolve(projectRoot, entry)).href);
    return;
  }
  const bundle = await bundledEntry(entry);
  // Stack traces name the TypeScript files and lines, as under tsx.
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(bundle.path).href);
}
