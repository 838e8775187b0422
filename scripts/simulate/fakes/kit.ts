import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { readRawBody } from "./read-body.ts";

/**
 * What every fake platform server shares (loopback, started once by test/setup/global.ts): the
 * request's URL and whole body handed to the fake's own handler (as text, and as bytes for a
 * multipart upload), and a handler that throws answered
 * 500 with the error's text, so a broken fake shows in the test instead of hanging a request.
 * Each fake keeps its own routes, wire format and `/_control/…` endpoints.
 */
export function fakeServer(
  handle: (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    body: string,
    raw: Buffer,
  ) => Promise<unknown>,
): Server {
  return createServer((req, res) => {
    void (async () => {
      const raw = await readRawBody(req);
      return handle(req, res, new URL(req.url ?? "/", "http://fake"), raw.toString("utf8"), raw);
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
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

/** One file of a multipart upload, as the fake received it. */
export interface UploadedFile {
  field: string;
  name: string;
  type: string;
  bytes: Buffer;
}

/**
 * A multipart/form-data body parsed as a platform parses it: its text fields and its files.
 * Undefined when the body is not multipart (the caller answers as its platform does).
 */
export async function parseMultipart(
  contentType: string | undefined,
  raw: Buffer,
): Promise<{ fields: Record<string, string>; files: UploadedFile[] } | undefined> {
  if (!(contentType ?? "").startsWith("multipart/form-data")) return undefined;
  const form = await new Request("http://fake/", {
    method: "POST",
    headers: { "content-type": contentType! },
    body: new Uint8Array(raw),
  }).formData();
  const fields: Record<string, string> = {};
  const files: UploadedFile[] = [];
  const entries: Array<[string, FormDataEntryValue]> = [];
  form.forEach((value, field) => {
    entries.push([field, value]);
  });
  for (const [field, value] of entries) {
    if (typeof value === "string") fields[field] = value;
    else
      files.push({
        field,
        name: value.name,
        type: value.type,
        bytes: Buffer.from(await value.arrayBuffer()),
      });
  }
  return { fields, files };
}
