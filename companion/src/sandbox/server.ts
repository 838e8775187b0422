import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SigningKey } from "../../../functions/channels/companion/signature.ts";
import { sandboxOpSchema } from "../../../functions/sandbox/wire.ts";
import { verifySigned } from "../verify.ts";
import {
  SandboxHost,
  SandboxInputError,
  SandboxUnavailableError,
  type HostLog,
  type SandboxHostOptions,
} from "./host.ts";

/**
 * `POST /v1/sandbox`: the Worker's sandbox protocol (functions/sandbox/wire.ts) on the companion,
 * signed with the outbound key as `/v1/outbound` is (same HMAC, same 300 s window). The companion's
 * HTTP server mounts it; `startSandboxServer` serves it alone (the sandbox container's host process,
 * and the workerd tests' real local backend).
 */
export const SANDBOX_PATH = "/v1/sandbox";
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface SandboxHttpDeps {
  host: SandboxHost;
  /** Empty: every request is refused (the outbound secret is not configured). */
  keys: SigningKey[];
  /** Skip signatures: only inside the sandbox container, reachable from its Durable Object alone. */
  unsigned?: boolean;
}

export async function handleSandboxHttp(
  deps: SandboxHttpDeps,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const body = await readCapped(req);
  if (!body) return send(res, 413, { error: "request too large", code: "too_large" });
  if (!deps.unsigned) {
    if (!deps.keys.length)
      return send(res, 401, {
        error: "the sandbox is not configured (EDGECLAW_COMPANION_OUTBOUND_SECRET)",
        code: "unauthorized",
      });
    const verified = await verifySigned(
      deps.keys,
      req.headers,
      "POST",
      url.pathname + url.search,
      body,
    );
    if (!verified.ok)
      return send(res, 401, { error: `unauthorized: ${verified.reason}`, code: "unauthorized" });
  }
  let parsed;
  try {
    parsed = sandboxOpSchema.safeParse(JSON.parse(new TextDecoder().decode(body)));
  } catch {
    return send(res, 400, { error: "malformed JSON", code: "malformed_json" });
  }
  if (!parsed.success)
    return send(res, 400, {
      error: `invalid request: ${parsed.error.issues[0]?.message}`,
      code: "invalid",
    });
  try {
    return send(res, 200, await deps.host.handle(parsed.data));
  } catch (error) {
    if (error instanceof SandboxUnavailableError)
      return send(res, 503, { error: error.message, code: "sandbox_unavailable" });
    if (error instanceof SandboxInputError)
      return send(res, 400, { error: error.message, code: "invalid" });
    return send(res, 500, {
      error: error instanceof Error ? error.message : String(error),
      code: "host_error",
    });
  }
}

export async function startSandboxServer(options: {
  root: string;
  keys: SigningKey[];
  host?: string;
  port?: number;
  unsigned?: boolean;
  log?: HostLog;
  /** One fixed workspace (the sandbox container's /workspace); see SandboxHostOptions. */
  workspaceDir?: string;
  binds?: SandboxHostOptions["binds"];
}): Promise<{ server: Server; port: number; sandbox: SandboxHost; stop(): Promise<void> }> {
  const sandbox = new SandboxHost(options.root, options.log ?? (() => undefined), {
    workspaceDir: options.workspaceDir,
    binds: options.binds,
  });
  const deps: SandboxHttpDeps = { host: sandbox, keys: options.keys, unsigned: options.unsigned };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://sandbox");
    if (req.method === "GET" && url.pathname === "/healthz") return send(res, 200, { ok: true });
    if (req.method !== "POST" || url.pathname !== SANDBOX_PATH)
      return send(res, 404, { error: "not found", code: "not_found" });
    void handleSandboxHttp(deps, req, res, url).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, { error: String(error), code: "host_error" });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    sandbox,
    stop: () =>
      new Promise<void>((resolve) => {
        sandbox.stopAll();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
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

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
