import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { readBody } from "./read-body.ts";

/**
 * What every fake platform server shares (loopback, started once by test/setup/global.ts): the
 * request's URL and whole body handed to the fake's own handler, and a handler that throws answered
 * 500 with the error's text, so a broken fake shows in the test instead of hanging a request.
 * Each fake keeps its own routes, wire format and `/_control/…` endpoints.
 */
export function fakeServer(
  handle: (req: IncomingMessage, res: ServerResponse, url: URL, body: string) => Promise<unknown>,
): Server {
  return createServer((req, res) => {
    void (async () =>
      handle(req, res, new URL(req.url ?? "/", "http://fake"), await readBody(req)))().catch(
      (error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      },
    );
  });
}

/** A JSON answer, with any extra headers (retry-after, cache-control); headers set earlier with `res.setHeader` stay. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** The JSON object a test posts to a `/_control/…` endpoint (none: `{}`). */
export function controlBody(raw: string): Record<string, unknown> {
  return raw.length ? (JSON.parse(raw) as Record<string, unknown>) : {};
}
