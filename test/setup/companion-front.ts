import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The test Worker's `companion.url`: one address, as a real companion serves `/v1/sandbox` and
 * `/v1/outbound` on one HTTP server. `/v1/sandbox` goes to the real local sandbox host; a
 * `/v1/outbound` command goes to the fake companion of the channel it names (a test kit that
 * sends through the companion hands its URL on as `companionOutboundUrl`). Bytes and headers pass
 * unchanged, so the signature is checked where the request lands.
 */
export async function startCompanionFront(routes: {
  sandbox: string;
  outbound: Record<string, string>;
}): Promise<{ url: string; stop(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      const path = new URL(req.url ?? "/", "http://front").pathname;
      let target: string | undefined;
      if (path === "/v1/outbound") {
        const channel = channelOf(body);
        target = channel ? routes.outbound[channel] : undefined;
        if (!target) {
          res.writeHead(409, { "content-type": "application/json" });
          res.end(JSON.stringify({ status: "not_connected", retryAfterMs: 5_000 }));
          return;
        }
      } else target = routes.sandbox;
      const forwarded = request(new URL(req.url ?? "/", target), {
        method: req.method,
        headers: { ...req.headers, host: new URL(target).host },
      });
      forwarded.on("response", (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forwarded.on("error", (error) => {
        if (!res.headersSent) res.writeHead(502);
        res.end(String(error));
      });
      forwarded.end(body);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function channelOf(body: Buffer): string | undefined {
  try {
    const channel = (JSON.parse(body.toString("utf8")) as { channel?: unknown }).channel;
    return typeof channel === "string" ? channel : undefined;
  } catch {
    return undefined;
  }
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
