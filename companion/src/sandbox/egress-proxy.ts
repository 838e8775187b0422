import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The companion's egress filter for `docker.network: "bridge"` with `allowedHosts`: bubblewrap can
 * give a command the whole network or none, so such a command gets none (its own network
 * namespace, only loopback) plus one way out — this HTTP proxy, on a Unix socket that bubblewrap
 * binds into the sandbox (a socket file crosses network namespaces; nothing else does). Inside,
 * a small forwarder (egress-forwarder.ts) listens on 127.0.0.1 and relays each connection to the
 * socket, and the command gets HTTP_PROXY/HTTPS_PROXY pointing there.
 *
 * The proxy speaks both proxy forms: CONNECT host:port (HTTPS, and any TLS the client tunnels —
 * the proxy never sees inside) and absolute-form plain HTTP requests. Each names its host, which
 * must match one of the operator's patterns (`*` matches any run of characters, as the container
 * backend's outbound filter reads them) or the request is answered 403 with the reason. Names are
 * resolved here, outside the sandbox, which has no resolver of its own. A tunnel, once open, goes
 * to the host it named and nowhere else.
 */

export interface EgressProxy {
  /** The Unix socket to bind into the sandbox. */
  socketPath: string;
  close(): void;
}

export type EgressLog = (message: string, fields: Record<string, unknown>) => void;

export function hostAllowed(host: string, patterns: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return patterns.some((pattern) => globMatch(pattern.toLowerCase(), name));
}

function globMatch(pattern: string, value: string): boolean {
  const pieces = pattern.split("*");
  if (pieces.length === 1) return pattern === value;
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  if (!value.startsWith(first) || !value.endsWith(last)) return false;
  if (first.length + last.length > value.length) return false;
  let at = first.length;
  const end = value.length - last.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = value.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

/** `host:port` of a CONNECT target (IPv6 in brackets), or undefined. */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+):(\d{1,5})$/i.exec(authority);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: match[1]!.replace(/^\[|\]$/g, ""), port };
}

function refusal(host: string): string {
  return `edgeclaw: ${host} is not in agents.defaults.sandbox.docker.allowedHosts; this sandbox may reach only those hosts`;
}

export async function startEgressProxy(
  allowedHosts: readonly string[],
  log: EgressLog,
): Promise<EgressProxy> {
  // A short path: a Unix socket's name is limited to ~108 bytes.
  const dir = mkdtempSync(join(tmpdir(), "edgeclaw-egress-"));
  const socketPath = join(dir, "proxy.sock");
  const open = new Set<Socket>();
  const server = createServer((req, res) => {
    // Plain HTTP through a proxy: the request line carries the absolute URL.
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      res.writeHead(400, { "content-type": "text/plain" }).end("edgeclaw: not a proxy request\n");
      return;
    }
    if (target.protocol !== "http:") {
      res.writeHead(400, { "content-type": "text/plain" }).end("edgeclaw: use CONNECT for TLS\n");
      return;
    }
    const host = target.hostname.replace(/^\[|\]$/g, "");
    if (!hostAllowed(host, allowedHosts)) {
      log("sandbox egress refused", { host });
      res.writeHead(403, { "content-type": "text/plain" }).end(`${refusal(host)}\n`);
      return;
    }
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    delete headers["proxy-authorization"];
    const upstream = httpRequest(
      {
        host,
        port: Number(target.port || 80),
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers,
      },
      (answer: IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`edgeclaw: ${host} could not be reached: ${error.message}\n`);
    });
    req.pipe(upstream);
  });
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    const target = parseAuthority(req.url ?? "");
    if (!target) {
      client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    if (!hostAllowed(target.host, allowedHosts)) {
      log("sandbox egress refused", { host: target.host });
      const body = `${refusal(target.host)}\n`;
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    const upstream = connect(target.port, target.host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    open.add(upstream);
    upstream.on("close", () => open.delete(upstream));
    upstream.on("error", (error) => {
      if (client.writable && !upstream.readyState.startsWith("open"))
        client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\nedgeclaw: ${error.message}\n`);
      else client.destroy();
    });
    client.on("error", () => upstream.destroy());
  });
  server.on("connection", (socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    socketPath,
    close() {
      server.close();
      for (const socket of open) socket.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
