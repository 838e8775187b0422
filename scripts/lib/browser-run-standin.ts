import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";

/**
 * A loopback stand-in for the Cloudflare Browser Run binding, over Debian's Chromium: it speaks the
 * binding's HTTP API as @cloudflare/playwright 1.3.6 calls it (node_modules/@cloudflare/playwright/
 * lib/index.js), so the browser Worker's own launch/connect code runs unchanged in workerd for
 * `npm run dev` and the tests (workers/browser/endpoint.ts points the Worker here through
 * EDGECLAW_LOOPBACK_BROWSER_RUN):
 *
 *   POST /v1/devtools/browser?keep_alive=MS   acquire: starts a Chromium, answers {sessionId}
 *   GET  /v1/devtools/browser/<sessionId>     WebSocket upgrade: bridged to that Chromium's
 *                                             browser-level DevTools socket, message for message
 *   GET  /v1/sessions | /v1/history | /v1/limits
 *
 * As Browser Run does, a session with nobody connected is ended after its keep_alive (default
 * 60 s), and Browser.close (or the process ending) closes it. Control, for tests:
 *   GET  /_control/sessions              every session with its state and connection count
 *   POST /_control/sessions/<id>/drop    cut its connections, keep the browser (a Worker's lost socket)
 *   POST /_control/sessions/<id>/end     end it, as the platform does when keep_alive runs out
 */

const DEFAULT_KEEP_ALIVE_MS = 60_000;
const MAX_SESSIONS = 8;
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--remote-debugging-port=0",
];

interface Session {
  id: string;
  startTime: number;
  endTime?: number;
  closeReasonText?: string;
  process: ChildProcess;
  devtoolsUrl: Promise<string>;
  connections: number;
  clients: Set<WebSocket>;
  keepAliveMs: number;
  idleTimer?: NodeJS.Timeout;
  profileDir: string;
}

export interface BrowserRunStandin {
  url: string;
  stop(): Promise<void>;
}

export async function startBrowserRunStandin(
  options: { executablePath?: string; port?: number } = {},
): Promise<BrowserRunStandin> {
  const executable = options.executablePath ?? process.env.EDGECLAW_CHROMIUM ?? "/usr/bin/chromium";
  const sessions = new Map<string, Session>();
  const sockets = new WebSocketServer({ noServer: true });

  const end = (session: Session, reason: string) => {
    if (session.endTime) return;
    session.endTime = Date.now();
    session.closeReasonText = reason;
    clearTimeout(session.idleTimer);
    if (session.process.exitCode === null) session.process.kill("SIGKILL");
  };

  const idle = (session: Session) => {
    clearTimeout(session.idleTimer);
    if (session.connections > 0 || session.endTime) return;
    session.idleTimer = setTimeout(() => end(session, "BrowserIdle"), session.keepAliveMs).unref();
  };

  const acquire = (keepAliveMs: number): Session => {
    const profileDir = mkdtempSync(join(tmpdir(), "edgeclaw-browser-run-"));
    const child = spawn(
      executable,
      [...CHROMIUM_FLAGS, `--user-data-dir=${profileDir}`, "about:blank"],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    const devtoolsUrl = new Promise<string>((resolve, reject) => {
      let seen = "";
      child.stderr?.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /DevTools listening on (ws:\/\/\S+)/.exec(seen);
        if (match) resolve(match[1]!);
        if (seen.length > 64_000) seen = seen.slice(-4_000);
      });
      child.once("error", reject);
      child.once("exit", (code) =>
        reject(new Error(`chromium exited (${code}) before it listened`)),
      );
    });
    devtoolsUrl.catch(() => undefined);
    const session: Session = {
      id: randomUUID(),
      startTime: Date.now(),
      process: child,
      devtoolsUrl,
      connections: 0,
      clients: new Set(),
      keepAliveMs,
      profileDir,
    };
    child.once("exit", () => {
      end(session, "BrowserClosed");
      rmSync(profileDir, { recursive: true, force: true });
    });
    sessions.set(session.id, session);
    idle(session);
    return session;
  };

  const active = () => [...sessions.values()].filter((session) => !session.endTime);
  const describe = (session: Session) => ({
    sessionId: session.id,
    startTime: session.startTime,
    ...(session.connections
      ? { connectionId: `${session.id}-c`, connectionStartTime: session.startTime }
      : {}),
    ...(session.endTime
      ? { endTime: session.endTime, closeReason: 1, closeReasonText: session.closeReasonText }
      : {}),
  });

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://standin");
    if (req.method === "POST" && url.pathname === "/v1/devtools/browser") {
      if (active().length >= MAX_SESSIONS) return json(res, 429, { error: "too many browsers" });
      const keepAlive = Number(url.searchParams.get("keep_alive") ?? DEFAULT_KEEP_ALIVE_MS);
      const session = acquire(
        Number.isFinite(keepAlive) && keepAlive > 0 ? keepAlive : DEFAULT_KEEP_ALIVE_MS,
      );
      try {
        await session.devtoolsUrl;
      } catch (error) {
        end(session, "LaunchFailed");
        return json(res, 500, { error: String(error) });
      }
      return json(res, 200, { sessionId: session.id });
    }
    if (url.pathname === "/v1/sessions")
      return json(res, 200, { sessions: active().map(describe) });
    if (url.pathname === "/v1/history")
      return json(res, 200, { history: [...sessions.values()].map(describe) });
    if (url.pathname === "/v1/limits")
      return json(res, 200, {
        activeSessions: active().map((session) => ({ id: session.id })),
        maxConcurrentSessions: MAX_SESSIONS,
        allowedBrowserAcquisitions: active().length < MAX_SESSIONS ? 1 : 0,
        timeUntilNextAllowedBrowserAcquisition: 0,
      });
    const control = /^\/_control\/sessions\/([^/]+)\/(drop|end)$/.exec(url.pathname);
    const target = control ? sessions.get(control[1]!) : undefined;
    if (control && req.method === "POST") {
      if (!target) return json(res, 404, { error: "no such session" });
      if (control[2] === "end") end(target, "BrowserIdle");
      else for (const client of target.clients) client.terminate();
      return json(res, 200, { ok: true });
    }
    if (url.pathname === "/_control/sessions")
      return json(
        res,
        200,
        [...sessions.values()].map((s) => ({ ...describe(s), connections: s.connections })),
      );
    json(res, 404, { error: `no route ${req.method} ${url.pathname}` });
  });

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const match = /^\/v1\/devtools\/browser\/([^/?]+)/.exec(req.url ?? "");
    const session = match ? sessions.get(match[1]!) : undefined;
    if (!session || session.endTime) {
      socket.end("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    sockets.handleUpgrade(req, socket, head, async (client) => {
      session.connections++;
      session.clients.add(client);
      clearTimeout(session.idleTimer);
      const pending: string[] = [];
      let browser: WebSocket | undefined;
      const closeBoth = () => {
        if (client.readyState === WebSocket.OPEN) client.close(1000, "browser closed");
        browser?.close();
      };
      client.on("message", (data) => {
        const text = data.toString();
        if (browser?.readyState === WebSocket.OPEN) browser.send(text);
        else pending.push(text);
      });
      client.once("close", () => {
        session.connections--;
        session.clients.delete(client);
        browser?.close();
        idle(session);
      });
      try {
        browser = new WebSocket(await session.devtoolsUrl, {
          perMessageDeflate: false,
          maxPayload: 256 * 1024 * 1024,
        });
      } catch {
        closeBoth();
        return;
      }
      browser.on("open", () => {
        for (const text of pending.splice(0)) browser!.send(text);
      });
      browser.on("message", (data) => client.send(data.toString()));
      browser.once("close", closeBoth);
      browser.once("error", closeBoth);
    });
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      for (const session of sessions.values()) end(session, "StandinStopped");
      // An upgraded socket is no longer the HTTP server's to close, and server.close() waits for
      // it: a Worker still holding a session (the tests' workerd runs on past global teardown)
      // would keep stop() waiting for ever.
      for (const client of sockets.clients) client.terminate();
      sockets.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
