import { request } from "node:http";

/**
 * signal-cli's HTTP daemon (`signal-cli daemon --http HOST:PORT`, man page signal-cli-jsonrpc(5)):
 * one JSON-RPC 2.0 request per `POST /api/v1/rpc` (Content-Type application/json, or the daemon
 * answers 415; a Host other than its bind address is 421), and `GET /api/v1/check` (200 while the
 * daemon runs). The daemon has no authentication: it is reached on loopback only.
 *
 * Failures are told apart by what they mean for a send:
 * - SignalRpcError: signal-cli answered with a JSON-RPC error (`code` -1 user error, -3 I/O,
 *   -4 untrusted identity, -5 rate limit, -32602 a bad account parameter, …): it did what the
 *   answer says, no more.
 * - SignalDaemonUnreachable: no connection was made, so the request never left (daemon down).
 * - SignalAnswerLost: the request was written and no whole answer came back (timeout, reset): the
 *   daemon may have done it.
 */

export class SignalRpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(`signal-cli ${method} answered error ${code}: ${message.slice(0, 300)}`);
  }
}

export class SignalDaemonUnreachable extends Error {}
export class SignalAnswerLost extends Error {}

/** JSON-RPC error codes signal-cli uses (SignalJsonRpcCommandHandler, JsonRpcResponse). */
export const RPC_CODES = {
  userError: -1,
  ioError: -3,
  untrustedKey: -4,
  rateLimit: -5,
  methodNotFound: -32601,
  invalidParams: -32602,
} as const;

/** Bounds one answer (a receive of 100 envelopes with long texts is the largest). */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export interface SignalRpc {
  readonly url: string;
  call<T>(
    method: string,
    params: Record<string, unknown>,
    options?: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<T>;
  /** `GET /api/v1/check`: true when the daemon answered 200. */
  check(signal?: AbortSignal): Promise<boolean>;
}

export function signalRpc(baseUrl: string): SignalRpc {
  const base = baseUrl.replace(/\/+$/, "");
  let next = 0;
  return {
    url: base,
    async call<T>(
      method: string,
      params: Record<string, unknown>,
      options: { signal?: AbortSignal; timeoutMs?: number } = {},
    ): Promise<T> {
      next += 1;
      const id = `ec-${next}`;
      const body = JSON.stringify({ jsonrpc: "2.0", method, params, id });
      const answer = await exchange(new URL(`${base}/api/v1/rpc`), "POST", body, options);
      if (answer.status !== 200)
        throw new SignalAnswerLost(
          `signal-cli ${method}: the daemon answered HTTP ${answer.status}`,
        );
      let parsed: {
        result?: unknown;
        error?: { code?: unknown; message?: unknown; data?: unknown };
      };
      try {
        parsed = JSON.parse(answer.text) as typeof parsed;
      } catch {
        throw new SignalAnswerLost(`signal-cli ${method}: the answer was not JSON`);
      }
      if (parsed.error)
        throw new SignalRpcError(
          method,
          typeof parsed.error.code === "number" ? parsed.error.code : 0,
          typeof parsed.error.message === "string" ? parsed.error.message : "error",
          parsed.error.data,
        );
      return parsed.result as T;
    },
    async check(signal) {
      try {
        const answer = await exchange(new URL(`${base}/api/v1/check`), "GET", undefined, {
          signal,
          timeoutMs: 5_000,
        });
        return answer.status === 200;
      } catch {
        return false;
      }
    },
  };
}

function exchange(
  url: URL,
  method: "GET" | "POST",
  body: string | undefined,
  options: { signal?: AbortSignal; timeoutMs?: number },
): Promise<{ status: number; text: string }> {
  const signal = AbortSignal.any([
    ...(options.signal ? [options.signal] : []),
    AbortSignal.timeout(options.timeoutMs ?? 30_000),
  ]);
  const label = `signal-cli ${method} ${url.pathname}`;
  return new Promise((resolve, reject) => {
    let connected = false;
    const req = request(
      url,
      {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        // A fresh connection per call: a kept-alive socket the daemon closed would fail a send
        // after "connecting" and make a request that never left look like a lost answer.
        agent: false,
        signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES)
            return void req.destroy(new Error(`answer over ${MAX_ANSWER_BYTES} bytes`));
          chunks.push(chunk);
        });
        res.on("end", () => {
          if (!res.complete)
            return reject(new SignalAnswerLost(`${label}: the answer was cut off`));
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", (error) =>
          reject(new SignalAnswerLost(`${label}: the answer was cut off (${error.message})`)),
        );
      },
    );
    req.on("socket", (socket) => {
      if (!socket.connecting) connected = true;
      else socket.once("connect", () => (connected = true));
    });
    req.on("error", (error) => {
      const reason = signal.aborted && !options.signal?.aborted ? "timed out" : error.message;
      reject(
        connected
          ? new SignalAnswerLost(`${label}: ${reason}, after the request was sent`)
          : new SignalDaemonUnreachable(`${label}: the daemon is not reachable (${reason})`),
      );
    });
    req.end(body);
  });
}
