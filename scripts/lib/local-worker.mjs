// The local Worker behind `npm run dev`: workerd serving the bundle a deploy would upload, built
// by local-worker-build.ts in a short-lived process at start and again on every save. `wrangler
// dev` would run the same workerd, but keeps beside it for the whole session a node process of its
// own (~200 MB idle, ~550 MB and most of the stack's CPU under load, proxying and logging every
// request), a second workerd for that proxy and an esbuild watch service (~90 MB).
//
//   node scripts/lib/local-worker.mjs --ip 127.0.0.1 --port 8787 --persist-to DIR --env-file FILE \
//     [--define NAME:JSON …] [--watch] [--inspector-port N]
//
// Plain JavaScript run by plain node (no TypeScript loader): this process lives as long as dev
// does and only supervises, so it stays at node's own ~40 MB. State goes where `wrangler dev
// --persist-to DIR` keeps it (DIR/v3/do/…), so a data dir works with both.
import { spawn } from "node:child_process";
import { readFileSync, watch } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { parseArgs, parseEnv } from "node:util";
import { workerdLogFilter } from "./workerd-log.mjs";

/** Folders whose changes reach the bundle. The config and workspace seed are bundled at start. */
const SOURCE_FOLDERS = ["workers", "durable-objects", "functions", "web"];
const REBUILD_DEBOUNCE_MS = 300;
const STOP_GRACE_MS = 5_000;
const buildScript = fileURLToPath(new URL("./local-worker-build.ts", import.meta.url));

const { values } = parseArgs({
  options: {
    ip: { type: "string", default: "127.0.0.1" },
    port: { type: "string" },
    "persist-to": { type: "string" },
    "env-file": { type: "string" },
    define: { type: "string", multiple: true, default: [] },
    watch: { type: "boolean", default: false },
    "inspector-port": { type: "string" },
  },
  strict: true,
});
if (!values.port || !values["persist-to"]) {
  console.error("edgeclaw dev: local-worker needs --port and --persist-to");
  process.exit(2);
}
const persistTo = resolve(values["persist-to"]);
const outDir = join(persistTo, "..", "worker-build");
const vars = values["env-file"] ? parseEnv(readFileSync(values["env-file"], "utf8")) : {};
const loopback = values.ip === "::1" || values.ip === "localhost" || values.ip.startsWith("127.");

/** Resolves true when the bundle and its workerd config were written. */
function build() {
  const args = [
    "--import",
    "tsx",
    buildScript,
    "--out-dir",
    outDir,
    "--address",
    `${values.ip}:${values.port}`,
    "--do-dir",
    join(persistTo, "v3", "do"),
    ...(loopback ? ["--client-address", values.ip] : []),
    ...Object.keys(vars).flatMap((name) => ["--env-binding", name]),
    ...values.define.flatMap((define) => ["--define", define]),
  ];
  return new Promise((resolveBuild) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "inherit"] });
    child.once("error", () => resolveBuild(false));
    child.once("exit", (code) => resolveBuild(code === 0));
  });
}

let workerd;
let stopping = false;

function startWorkerd() {
  // The workerd that wrangler ships with (its own dependency: npm may not hoist it to the top).
  const fromWrangler = createRequire(createRequire(import.meta.url).resolve("wrangler"));
  const workerdPath = process.env.MINIFLARE_WORKERD_PATH ?? fromWrangler("workerd").default;
  const inspector = values["inspector-port"]
    ? [`--inspector-addr=${values.ip}:${values["inspector-port"]}`]
    : [];
  // Secrets reach workerd through its environment (the config names them), never its command line.
  const child = spawn(
    workerdPath,
    ["serve", "--experimental", "--verbose", ...inspector, join(outDir, "workerd.capnp")],
    {
      env: { ...process.env, ...vars },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  // workerd's output line by line, its repeated connection diagnostics condensed (workerd-log.mjs).
  for (const [from, to] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ]) {
    const filter = workerdLogFilter();
    createInterface({ input: from, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
      const kept = filter(line);
      if (kept !== undefined) to.write(`${kept}\n`);
    });
  }
  child.once("exit", (code, signal) => {
    if (stopping || workerd !== child) return;
    console.error(`edgeclaw dev: workerd exited (${signal ?? `code ${code}`})`);
    process.exit(code || 1);
  });
  workerd = child;
}

async function stopWorkerd() {
  const child = workerd;
  workerd = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolveGone) => child.once("exit", resolveGone));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  await gone;
  clearTimeout(timer);
}

const built = await build();
if (built) startWorkerd();

const watchers = [];
if (values.watch || !built) {
  let timer;
  let building = Promise.resolve();
  const rebuild = () => {
    building = building.then(async () => {
      if (stopping || !(await build())) return;
      await stopWorkerd();
      if (stopping) return;
      startWorkerd();
      console.log("edgeclaw dev: Worker rebuilt and restarted");
    });
  };
  for (const folder of SOURCE_FOLDERS) {
    try {
      watchers.push(
        watch(join(process.cwd(), folder), { recursive: true }, () => {
          clearTimeout(timer);
          timer = setTimeout(rebuild, REBUILD_DEBOUNCE_MS);
        }),
      );
    } catch {
      // A folder this project does not have.
    }
  }
}

async function stop() {
  if (stopping) return;
  stopping = true;
  for (const watcher of watchers) watcher.close();
  await stopWorkerd();
  process.exit(0);
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => void stop());
