import type { IncomingMessage, ServerResponse } from "node:http";
import { controlBody, fakeServer, json } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import {
  conversationOf,
  FAKE_SIGNAL_BOT,
  FakeSignalWorld,
  type IncomingMessage as Incoming,
} from "./signal-world.ts";

/**
 * A fake signal-cli HTTP daemon on loopback (`signal-cli daemon --http --receive-mode manual`,
 * signal-cli-jsonrpc(5)), multi-account unless `singleAccount`:
 * - `GET /api/v1/check` 200. `POST /api/v1/rpc`: Content-Type other than application/json → 415;
 *   a Host other than the bind address → 421; one JSON-RPC 2.0 request → its answer. Methods:
 *   listAccounts ([{number}]; "Method not implemented" -32601 for a single-account daemon);
 *   receive {timeout (s), maxMessages} (the waiting envelopes as signal-cli's receive items; an
 *   answered envelope is forgotten, as signal-cli forgets it); send {recipient[] | groupId, message,
 *   quoteTimestamp, quoteAuthor, textStyle} → {timestamp, results}; sendReaction, sendTyping,
 *   sendReceipt, getAttachment {id} → {data: base64}, listGroups. A multi-account daemon wants
 *   `account` ("Specified account does not exist" -32602 otherwise); an unknown parameter is
 *   -32600, as signal-cli's strict parameter mapping answers. With `receiveMode: "on-start"`,
 *   receive answers -1 "…already being received".
 * - Control (plain fetch): POST /_control/message (IncomingMessage, + account?) → {timestamp};
 *   POST /_control/item {account, item} a raw receive item; POST /_control/script {method, times?,
 *   action: "error" | "dropAfter" | "dropBefore", code?, message?, data?} (dropAfter: done, then
 *   the connection is cut before the answer — a lost answer); POST /_control/config
 *   {singleAccount?, receiveMode?, accounts?, unregistered?}; GET /_control/sent?to=&method=;
 *   GET /_control/state {pending, delivered, receives}.
 */

export interface FakeSignalDaemon {
  url: string;
  world: FakeSignalWorld;
  stop(): Promise<void>;
}

interface Script {
  method: string;
  times: number;
  action: "error" | "dropAfter" | "dropBefore";
  code?: number;
  message?: string;
  data?: unknown;
}

class RpcFailure extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data: unknown = null) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** Each method's parameters (signal-cli maps them strictly onto its request types). */
const PARAMS: Record<string, string[]> = {
  listAccounts: [],
  receive: ["timeout", "maxMessages"],
  send: [
    "recipient",
    "groupId",
    "message",
    "quoteTimestamp",
    "quoteAuthor",
    "textStyle",
    "mention",
    "attachment",
    "attachments",
  ],
  sendReaction: ["recipient", "groupId", "emoji", "targetAuthor", "targetTimestamp", "remove"],
  sendTyping: ["recipient", "groupId", "stop"],
  sendReceipt: ["recipient", "targetTimestamp", "type"],
  getAttachment: ["id", "recipient", "groupId"],
  listGroups: [],
};

export async function startFakeSignalDaemon(
  /** `port`: listen there (as `signal-cli daemon --http 127.0.0.1:PORT` does) instead of a free one. */
  options: { singleAccount?: boolean; port?: number } = {},
): Promise<FakeSignalDaemon> {
  const world = new FakeSignalWorld();
  const config = { singleAccount: options.singleAccount ?? false, receiveMode: "manual" };
  let scripts: Script[] = [];
  let receives = 0;
  let port = 0;
  const abort = new AbortController();

  async function rpc(method: string, raw: Record<string, unknown>, script?: Script) {
    const params = { ...raw };
    const allowed = PARAMS[method];
    if (!allowed) throw new RpcFailure(-32601, "Method not implemented");
    let account = FAKE_SIGNAL_BOT.number;
    if (method === "listAccounts") {
      if (config.singleAccount) throw new RpcFailure(-32601, "Method not implemented");
      return [...world.accounts].map((number) => ({ number }));
    }
    if (!config.singleAccount) {
      if (typeof params.account === "string") {
        if (!world.accounts.has(params.account))
          throw new RpcFailure(-32602, "Specified account does not exist");
        account = params.account;
        delete params.account;
      } else if (world.accounts.size !== 1)
        throw new RpcFailure(-32602, "Method requires valid account parameter");
      else account = [...world.accounts][0]!;
    }
    for (const key of Object.keys(params))
      if (!allowed.includes(key))
        throw new RpcFailure(-32600, `Unrecognized field "${key}" (${method})`);
    switch (method) {
      case "receive": {
        if (config.receiveMode !== "manual")
          throw new RpcFailure(
            -1,
            "Receive command cannot be used if messages are already being received.",
          );
        receives += 1;
        const timeout = typeof params.timeout === "number" ? params.timeout : 3;
        const max =
          typeof params.maxMessages === "number" && params.maxMessages > 0
            ? params.maxMessages
            : 1000;
        const items = await world.next(account, max, Math.max(0, timeout * 1000), abort.signal);
        // Forgotten as the answer is written, whether or not anyone reads it: signal-cli acked the
        // server when it cached each envelope and deletes its copy once handed to the caller.
        world.taken(account, items.length);
        return items;
      }
      case "send":
      case "sendReaction": {
        const recipient = Array.isArray(params.recipient)
          ? params.recipient
          : params.recipient
            ? [params.recipient]
            : [];
        if (!recipient.length && typeof params.groupId !== "string")
          throw new RpcFailure(-1, "No recipients given");
        if (typeof params.groupId === "string" && !world.groups.has(params.groupId))
          throw new RpcFailure(-1, "Invalid group id: Group not found");
        const timestamp = world.tick();
        const results = recipient.map((r) => ({
          recipientAddress: { uuid: null, number: r },
          type: world.unregistered.has(String(r)) ? "UNREGISTERED_FAILURE" : "SUCCESS",
        }));
        if (results.length && results.every((r) => r.type !== "SUCCESS"))
          throw new RpcFailure(-1, "Failed to send message", { response: { timestamp, results } });
        world.record({ account, method, params, timestamp });
        if (script?.action === "dropAfter") throw new DropAnswer();
        return { timestamp, results };
      }
      case "sendTyping":
      case "sendReceipt":
        world.record({ account, method, params });
        return {};
      case "getAttachment": {
        const data = world.attachments.get(String(params.id));
        if (data === undefined) throw new RpcFailure(-1, "Attachment file not found");
        return { data };
      }
      case "listGroups":
        return [...world.groups].map(([id, g]) => ({
          id,
          name: g.name,
          isMember: true,
          members: g.members,
        }));
    }
    return {};
  }

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL, body: string) {
    if (url.pathname.startsWith("/_control/")) return control(req, res, url, body);
    if (url.pathname === "/api/v1/check") {
      res.writeHead(req.method === "GET" ? 200 : 405);
      return res.end();
    }
    if (url.pathname !== "/api/v1/rpc") return json(res, 404, {});
    if (req.method !== "POST") return res.writeHead(405).end();
    const host = req.headers.host ?? "";
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`)
      return res.writeHead(421).end();
    if (!(req.headers["content-type"] ?? "").startsWith("application/json"))
      return res.writeHead(415).end();
    let request: { id?: unknown; method?: unknown; params?: unknown };
    try {
      request = JSON.parse(body) as typeof request;
    } catch {
      return json(res, 200, {
        jsonrpc: "2.0",
        error: { code: -32700, message: "Parse error", data: null },
        id: null,
      });
    }
    const id = request.id ?? null;
    const method = typeof request.method === "string" ? request.method : "";
    if (!method)
      return json(res, 200, {
        jsonrpc: "2.0",
        error: { code: -32600, message: "method field must be set", data: null },
        id,
      });
    const script = scripts.find((s) => s.method === method);
    if (script) {
      script.times -= 1;
      scripts = scripts.filter((s) => s.times > 0);
      if (script.action === "dropBefore") return req.socket.destroy();
      if (script.action === "error")
        return json(res, 200, {
          jsonrpc: "2.0",
          error: {
            code: script.code ?? -3,
            message: script.message ?? "scripted failure",
            data: script.data ?? null,
          },
          id,
        });
    }
    try {
      const params = (request.params ?? {}) as Record<string, unknown>;
      const result = await rpc(method, params, script);
      return json(res, 200, { jsonrpc: "2.0", result, id });
    } catch (error) {
      if (error instanceof DropAnswer) return req.socket.destroy();
      if (error instanceof RpcFailure)
        return json(res, 200, {
          jsonrpc: "2.0",
          error: { code: error.code, message: error.message, data: error.data },
          id,
        });
      throw error;
    }
  }

  async function control(req: IncomingMessage, res: ServerResponse, url: URL, body: string) {
    const input = req.method === "POST" ? controlBody(body) : {};
    switch (url.pathname) {
      case "/_control/message": {
        const { account, ...message } = input as Incoming & { account?: string };
        return json(res, 200, { timestamp: world.incoming(message, account) });
      }
      case "/_control/item":
        world.enqueue(
          String(input.account ?? FAKE_SIGNAL_BOT.number),
          input.item as Record<string, unknown>,
        );
        return json(res, 200, {});
      case "/_control/group":
        world.groups.set(String(input.groupId), {
          name: String(input.name ?? "group"),
          members: (input.members as string[]) ?? [],
        });
        return json(res, 200, {});
      case "/_control/script":
        scripts.push({
          ...(input as unknown as Script),
          times: typeof input.times === "number" ? input.times : 1,
          action: (input.action as Script["action"] | undefined) ?? "error",
        });
        return json(res, 200, {});
      case "/_control/config":
        if (typeof input.singleAccount === "boolean") config.singleAccount = input.singleAccount;
        if (typeof input.receiveMode === "string") config.receiveMode = input.receiveMode;
        if (Array.isArray(input.accounts)) {
          world.accounts.clear();
          for (const a of input.accounts) world.accounts.add(String(a));
        }
        for (const r of (input.unregistered as string[] | undefined) ?? [])
          world.unregistered.add(r);
        return json(res, 200, {});
      case "/_control/sent": {
        const to = url.searchParams.get("to");
        const method = url.searchParams.get("method");
        const calls = world.sent.filter(
          (c) => (!method || c.method === method) && (!to || conversationOf(c.params) === to),
        );
        return json(res, 200, calls);
      }
      case "/_control/state":
        return json(res, 200, { pending: world.pending(), delivered: world.delivered, receives });
    }
    return json(res, 404, { error: "unknown control path" });
  }

  const server = fakeServer(handle);
  const listening = options.port
    ? await listenOn(server, options.port)
    : await listenOnLoopback(server);
  port = Number(new URL(listening.url).port);
  return {
    url: listening.url,
    world,
    stop: () => {
      abort.abort();
      return listening.stop();
    },
  };
}

class DropAnswer extends Error {}

async function listenOn(
  server: ReturnType<typeof fakeServer>,
  port: number,
): Promise<{ url: string; stop(): Promise<void> }> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
