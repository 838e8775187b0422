// The local Worker behind `npm run dev`: workerd serving the bundle a deploy would upload, built
// by local-worker-build.ts in a short-lived process at start and again on every save. `wrangler
// dev` would run the same workerd, but keeps beside it for the whole session a node process of its
// own (~200 MB idle, ~550 MB and most of the stack's CPU under load, proxying and logging every
// request), a second workerd for that proxy and an esbuild watch service (~90 MB).
//
//   node scripts/lib/local-worker.mjs --ip 127.0.0.1 --port 8787 --persist-to DIR --vars-file FILE \
//     [--env-binding NAME …] [--define NAME:JSON …] [--watch] [--inspector-port N] \
//     [--browser-run URL]
//
// --browser-run names the loopback Browser Run stand-in dev started: the browser Worker is then
// built and served beside the main one, bound to it as BROWSER_WORKER (local-worker-build.ts).
//
// (Not --env-file: node reads a file named by --env-file anywhere on its command line, into its own
// environment, and fails when it does not exist yet.) The bundle is built at once; workerd starts only once FILE exists (dev writes it when Postgres
// answers, so the build and Postgres's start overlap) and FILE names exactly the --env-binding
// variables (the names the bundle's workerd config binds; the values are only in FILE).
//
// Plain JavaScript run by plain node (no TypeScript loader): this process lives as long as dev
// does and only supervises, so it stays at node's own ~40 MB. State goes where `wrangler dev
// --persist-to DIR` keeps it (DIR/v3/do/…), so a data dir works with both.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, watch } from "node:fs";
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
    "vars-file": { type: "string" },
    "env-binding": { type: "string", multiple: true, default: [] },
    define: { type: "string", multiple: true, default: [] },
    watch: { type: "boolean", default: false },
    "inspector-port": { type: "string" },
    "browser-run": { type: "string" },
  },
  strict: true,
});
if (!values.port || !values["persist-to"]) {
  console.error("edgeclaw dev: local-worker needs --port and --persist-to");
  process.exit(2);
}
const persistTo = resolve(values["persist-to"]);
const outDir = join(persistTo, "..", "worker-build");
const envBindings = [...new Set(values["env-binding"])].sort();
/** How often the env file is looked for while dev starts Postgres. */
const ENV_FILE_POLL_MS = 50;
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
    ...envBindings.flatMap((name) => ["--env-binding", name]),
    ...values.define.flatMap((define) => ["--define", define]),
    ...(values["browser-run"] ? ["--browser-run", values["browser-run"]] : []),
  ];
  return new Promise((resolveBuild) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "inherit"] });
    child.once("error", () => resolveBuild(false));
    child.once("exit", (code) => resolveBuild(code === 0));
  });
}

let workerd;
let stopping = false;
/** The env file's variables, read once it exists; undefined until then. */
let vars;

/** Waits for the env file (dev writes it whole, by rename) and checks it names what the config binds. */
async function readVars() {
  const file = values["vars-file"];
  if (!file) return {};
  while (!existsSync(file)) {
    if (stopping) return {};
    await new Promise((resolveDelay) => setTimeout(resolveDelay, ENV_FILE_POLL_MS));
  }
  const read = parseEnv(readFileSync(file, "utf8"));
  const names = Object.keys(read).sort();
  if (names.join("\n") !== envBindings.join("\n")) {
    console.error(
      `edgeclaw dev: ${file} names ${names.join(", ") || "nothing"} but the Worker binds ${envBindings.join(", ") || "nothing"} (--env-binding)`,
    );
    process.exit(2);
  }
  return read;
}

async function startWorkerd() {
  vars ??= await readVars();
  if (stopping) return;
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
const firstStart = built ? startWorkerd() : Promise.resolve();

const watchers = [];
if (values.watch || !built) {
  let timer;
  // A save while the first start still waits for the env file queues behind it.
  let building = firstStart;
  const rebuild = () => {
    building = building.then(async () => {
      if (stopping || !(await build())) return;
      await stopWorkerd();
      if (stopping) return;
      await startWorkerd();
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
