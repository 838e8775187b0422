/**
 * What runs first inside a bubblewrap sandbox whose egress is limited to allowedHosts
 * (egress-proxy.ts has the why): the companion's own node binary, bound read-only at NODE_PATH,
 * runs FORWARDER with `node -e`. It listens on 127.0.0.1:PROXY_PORT in the sandbox's own network
 * namespace, relays every connection to the proxy's Unix socket (bound at SOCKET_PATH), and only
 * once it listens starts the command (`/bin/sh -lc`, the text in EDGECLAW_EGRESS_COMMAND, never
 * re-quoted) with the proxy variables set; it exits with the command's code or signal and passes
 * signals on, so the command's end, timeout and kill read as without it.
 */

export const NODE_PATH = "/run/edgeclaw/node";
export const SOCKET_PATH = "/run/edgeclaw/egress.sock";
export const PROXY_PORT = 3128;

/** The variables a command gets: curl, git, pip, npm and Node's fetch (NODE_USE_ENV_PROXY) read them. */
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    NO_PROXY: "localhost,127.0.0.1,::1",
    no_proxy: "localhost,127.0.0.1,::1",
    NODE_USE_ENV_PROXY: "1",
  };
}

export const FORWARDER = `
const net = require("node:net");
const { spawn } = require("node:child_process");
const server = net.createServer((inner) => {
  const outer = net.connect(${JSON.stringify(SOCKET_PATH)});
  inner.pipe(outer);
  outer.pipe(inner);
  inner.on("error", () => outer.destroy());
  outer.on("error", () => inner.destroy());
});
server.listen(${PROXY_PORT}, "127.0.0.1", () => {
  const env = { ...process.env };
  const command = env.EDGECLAW_EGRESS_COMMAND;
  delete env.EDGECLAW_EGRESS_COMMAND;
  const child = spawn("/bin/sh", ["-lc", command], { stdio: "inherit", env });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"])
    process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    server.close();
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
});
server.on("error", (error) => {
  process.stderr.write("edgeclaw: the sandbox egress forwarder could not start: " + error.message + "\\n");
  process.exit(126);
});
`;
