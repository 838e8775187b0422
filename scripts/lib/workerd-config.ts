/**
 * The workerd config (capnp text) that serves the built Worker locally: one socket, the Worker
 * with its Durable Object namespaces stored on disk, bindings read from workerd's environment, and
 * fetch() allowed to loopback and private addresses (local fakes, the PGlite bridge). The layout on
 * disk is the one `wrangler dev --persist-to DIR` uses (DIR/v3/do/<worker>-<class>/<id>.sqlite),
 * so a data dir keeps its sessions across either way of running.
 */

/** The part of wrangler's Miniflare options for wrangler.toml that this config needs. */
export interface WorkerShape {
  name: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
  /** binding name → class, from `[[durable_objects.bindings]]` (classes of this Worker only). */
  durableObjects: Record<string, { className: string; useSQLite?: boolean }>;
  /** Plain-text `[vars]` from wrangler.toml. */
  vars: Record<string, string>;
}

export interface WorkerdConfigInput {
  worker: WorkerShape;
  /** The bundle's file name, relative to where the config file is written (`embed` resolves there). */
  moduleFile: string;
  /** host:port to listen on. */
  address: string;
  /** Absolute folder for Durable Object storage (…/v3/do). */
  durableObjectDir: string;
  /** Names of bindings whose values workerd reads from its own environment (secrets, dev vars). */
  environmentBindings: string[];
  /**
   * What the Worker sees as CF-Connecting-IP (the header Cloudflare sets in production), replacing
   * whatever a client sent. Only a listener bound to loopback knows it: everyone there is local.
   */
  clientAddress?: string;
  /**
   * Absolute folder for the media store (functions/media/store.ts), served to the Worker as the
   * service binding `MEDIA_DISK`: workerd has no R2 outside Miniflare, and a writable disk
   * service takes PUT, GET and DELETE of files.
   */
  mediaDir?: string;
  /**
   * The browser Worker (wrangler.browser.toml) beside the main one, bound to it as the service
   * binding `BROWSER_WORKER` (entrypoint BrowserService), as a deploy binds it: its Durable
   * Objects stored with the main Worker's, and Browser Run replaced by the loopback stand-in at
   * `browserRunUrl` (workers/browser/endpoint.ts).
   */
  browser?: {
    /** The bundle's path, relative to where the config file is written (`embed` resolves there). */
    modulePath: string;
    compatibilityDate: string;
    compatibilityFlags: string[];
    browserRunUrl: string;
  };
}

/** wrangler.browser.toml's name and Durable Object: the storage folder is named after both. */
const BROWSER_WORKER_NAME = "edgeclaw-browser";
const BROWSER_SESSION_CLASS = "BrowserSessionDO";

export function workerdConfig(input: WorkerdConfigInput): string {
  const { worker } = input;
  const bindings: string[] = [];
  const bound = new Set<string>();
  for (const name of input.environmentBindings) {
    bindings.push(`(name = ${text(name)}, fromEnvironment = ${text(name)})`);
    bound.add(name);
  }
  for (const [name, value] of Object.entries(worker.vars)) {
    if (!bound.has(name)) bindings.push(`(name = ${text(name)}, text = ${text(value)})`);
  }
  for (const [name, { className }] of Object.entries(worker.durableObjects)) {
    bindings.push(
      `(name = ${text(name)}, durableObjectNamespace = (className = ${text(className)}))`,
    );
  }
  if (input.mediaDir) bindings.push(`(name = "MEDIA_DISK", service = "media-disk")`);
  if (input.browser)
    bindings.push(
      `(name = "BROWSER_WORKER", service = (name = "browser", entrypoint = "BrowserService"))`,
    );
  const classes = [
    ...new Map(Object.values(worker.durableObjects).map((d) => [d.className, d])).values(),
  ];
  const namespaces = classes.map(
    (d) =>
      `(className = ${text(d.className)}, uniqueKey = ${text(`${worker.name}-${d.className}`)}, enableSql = ${d.useSQLite === true})`,
  );
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"], tlsOptions = (trustBrowserCas = true))),
    (name = "do-storage", disk = (path = ${text(input.durableObjectDir)}, writable = true)),${
      input.mediaDir
        ? `\n    (name = "media-disk", disk = (path = ${text(input.mediaDir)}, writable = true)),`
        : ""
    }${input.browser ? `\n    (name = "browser", worker = .browserWorker),` : ""}
  ],
  sockets = [(name = "http", address = ${text(input.address)}, http = (${injectClientAddress(input.clientAddress)}), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [(name = ${text(input.moduleFile)}, esModule = embed ${text(input.moduleFile)})],
  compatibilityDate = ${text(worker.compatibilityDate)},
  compatibilityFlags = [${worker.compatibilityFlags.map(text).join(", ")}],
  bindings = [
    ${bindings.join(",\n    ")}
  ],
  durableObjectNamespaces = [${namespaces.join(", ")}],
  durableObjectStorage = ${classes.length ? `(localDisk = "do-storage")` : "(none = void)"},
  globalOutbound = "internet",
);
${input.browser ? browserWorker(input.browser) : ""}`;
}

function browserWorker(browser: NonNullable<WorkerdConfigInput["browser"]>): string {
  return `
const browserWorker :Workerd.Worker = (
  modules = [(name = "index.js", esModule = embed ${text(browser.modulePath)})],
  compatibilityDate = ${text(browser.compatibilityDate)},
  compatibilityFlags = [${browser.compatibilityFlags.map(text).join(", ")}],
  bindings = [
    (name = "BROWSER_SESSIONS", durableObjectNamespace = (className = ${text(BROWSER_SESSION_CLASS)})),
    (name = "EDGECLAW_LOOPBACK_BROWSER_RUN", text = ${text(browser.browserRunUrl)}),
  ],
  durableObjectNamespaces = [(className = ${text(BROWSER_SESSION_CLASS)}, uniqueKey = ${text(`${BROWSER_WORKER_NAME}-${BROWSER_SESSION_CLASS}`)}, enableSql = true)],
  durableObjectStorage = (localDisk = "do-storage"),
  globalOutbound = "internet",
);
`;
}

function injectClientAddress(address: string | undefined): string {
  // No address: the header is removed, so a client cannot claim one.
  const value = address === undefined ? "" : `, value = ${text(address)}`;
  return `injectRequestHeaders = [(name = "CF-Connecting-IP"${value})]`;
}

/** A capnp text literal: capnp takes C escapes; anything outside printable ASCII goes as UTF-8 \x bytes. */
function text(value: string): string {
  let out = '"';
  for (const byte of Buffer.from(value, "utf8")) {
    if (byte === 0x22) out += '\\"';
    else if (byte === 0x5c) out += "\\\\";
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  return `${out}"`;
}
