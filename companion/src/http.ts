import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SigningKey } from "../../functions/channels/companion/signature.ts";
import { verifySigned } from "./verify.ts";
import { handleSandboxHttp, SANDBOX_PATH } from "./sandbox/server.ts";
import type { SandboxHost } from "./sandbox/host.ts";
import {
  outboundCommandSchema,
  OutboundNotConnectedError,
  OutboundRejectedError,
  type OutboundCommand,
  type OutboundSender,
} from "./outbound.ts";

/**
 * The companion's HTTP surface: `GET /healthz` (process up: the container's ping), `GET /readyz`
 * (lease held and every connector ready), and the signed `POST /v1/outbound`. Bodies are capped;
 * nothing here is reachable without the outbound key except the two probes.
 */
export interface HttpDeps {
  outboundKeys: SigningKey[];
  ready(): { ready: boolean; detail: unknown };
  /** The live connector that can send for this account, if any. */
  sender(channel: string, accountId: string): OutboundSender | undefined;
  receipts: { get(commandId: string): unknown; save(commandId: string, answer: unknown): void };
  log(level: "info" | "warn" | "error", message: string, fields?: Record<string, unknown>): void;
  /** The sandbox host behind `POST /v1/sandbox` (exec for the agent), signed with the outbound keys. */
  sandbox?: SandboxHost;
}

const MAX_BODY_BYTES = 1024 * 1024;

export async function startHttp(
  deps: HttpDeps,
  host: string,
  port: number,
): Promise<{ server: Server; port: number }> {
  const inFlight = new Map<string, Promise<{ status: number; body: unknown }>>();
  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      deps.log("error", "http handler failed", {
        error: error instanceof Error ? error.message : String(error),
      });
      if (!res.headersSent) send(res, 500, { error: "internal error" });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://companion");
    if (req.method === "GET" && url.pathname === "/healthz") return send(res, 200, { ok: true });
    if (req.method === "GET" && url.pathname === "/readyz") {
      const { ready, detail } = deps.ready();
      return send(res, ready ? 200 : 503, { ready, detail });
    }
    if (req.method === "POST" && url.pathname === "/v1/outbound") return outbound(req, res, url);
    if (req.method === "POST" && url.pathname === SANDBOX_PATH && deps.sandbox)
      return handleSandboxHttp({ host: deps.sandbox, keys: deps.outboundKeys }, req, res, url);
    return send(res, 404, { error: "not found" });
  }

  async function outbound(req: IncomingMessage, res: ServerResponse, url: URL) {
    const body = await readCapped(req);
    if (!body) return send(res, 413, { status: "rejected", code: "too_large" });
    if (!deps.outboundKeys.length)
      return send(res, 401, {
        error: "outbound is not configured (EDGECLAW_COMPANION_OUTBOUND_SECRET)",
      });
    const verified = await verifySigned(
      deps.outboundKeys,
      req.headers,
      "POST",
      url.pathname + url.search,
      body,
    );
    if (!verified.ok) return send(res, 401, { error: `unauthorized: ${verified.reason}` });
    let command: OutboundCommand;
    try {
      const parsed = outboundCommandSchema.safeParse(JSON.parse(new TextDecoder().decode(body)));
      if (!parsed.success) return send(res, 400, { status: "rejected", code: "invalid_command" });
      command = parsed.data;
    } catch {
      return send(res, 400, { status: "rejected", code: "malformed_json" });
    }
    if (req.headers["idempotency-key"] !== command.commandId)
      return send(res, 400, { status: "rejected", code: "idempotency_key_mismatch" });
    const known = deps.receipts.get(command.commandId) as
      | { status: string; receipt: unknown }
      | undefined;
    if (known)
      return known.status === "rejected"
        ? send(res, 422, { ...known, duplicate: true })
        : send(res, 200, { ...known, status: "duplicate" });
    // The same command arriving again while the first is still sending joins it (no second send).
    let running = inFlight.get(command.commandId);
    if (!running) {
      running = execute(command).finally(() => inFlight.delete(command.commandId));
      inFlight.set(command.commandId, running);
    }
    const answer = await running;
    return send(res, answer.status, answer.body);
  }

  async function execute(command: OutboundCommand): Promise<{ status: number; body: unknown }> {
    const sender = deps.sender(command.channel, command.accountId);
    if (!sender) return { status: 409, body: { status: "not_connected", retryAfterMs: 5_000 } };
    try {
      const receipt = await sender.send(command);
      const answer = { status: "sent", receipt };
      deps.receipts.save(command.commandId, answer);
      return { status: 200, body: answer };
    } catch (error) {
      if (error instanceof OutboundRejectedError) {
        const answer = { status: "rejected", code: error.code };
        deps.receipts.save(command.commandId, answer);
        return { status: 422, body: answer };
      }
      if (error instanceof OutboundNotConnectedError)
        return {
          status: 409,
          body: { status: "not_connected", error: error.message, retryAfterMs: 5_000 },
        };
      // Unknown outcome: not recorded, so the Worker's retry (same commandId) may try again.
      return {
        status: 503,
        body: { status: "failed", error: error instanceof Error ? error.message : String(error) },
      };
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

async function readCapped(req: IncomingMessage): Promise<Uint8Array | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    total += buffer.length;
    if (total > MAX_BODY_BYTES) return undefined;
    chunks.push(buffer);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
