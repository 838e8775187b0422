import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import * as z from "zod";
import { readBody } from "./fakes/read-body.ts";

/**
 * Under `EDGECLAW_SIMULATE=1`, the dev companion reaches the Worker through this loopback pass-through:
 * every request and answer goes on unchanged (signatures cover the path and body, not the host),
 * and the Worker's answers to `POST /internal/companion/events` are kept, per channel and event id,
 * for `edgeclaw simulate` to read at `GET /_simulate/ingress?channel=&eventId=`. That answer is the
 * only place that says where a socket event was stored (session key, dedup key) or why nothing was
 * taken; a webhook says it in its own ack (`x-edgeclaw-event`). It holds ids, never message text.
 */
export const TAP_PATH = "/_simulate/ingress";

/** How many answers are kept (oldest forgotten first): a simulation reads its own within seconds. */
const KEPT = 500;

export const tappedResultSchema = z.object({
  eventId: z.string(),
  status: z.enum(["stored", "failed"]),
  events: z.array(z.object({ sessionKey: z.string(), dedupKey: z.string() })).default([]),
  dropped: z.array(z.string()).optional(),
  error: z.string().optional(),
});
export type TappedResult = z.infer<typeof tappedResultSchema>;

const eventsRequestSchema = z.object({
  channel: z.string(),
  events: z.array(z.object({ eventId: z.string() })),
});
const eventsAnswerSchema = z.object({ results: z.array(tappedResultSchema) });

export interface CompanionTap {
  /** What the companion takes as its Worker URL. */
  url: string;
  stop(): Promise<void>;
}

/** Hop-by-hop and framing headers that must not be copied from one connection to the next. */
const NOT_FORWARDED = new Set([
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "content-encoding",
]);

export async function startCompanionTap(workerUrl: string): Promise<CompanionTap> {
  const kept = new Map<string, TappedResult>();
  const keep = (channel: string, result: TappedResult) => {
    const key = `${channel}\n${result.eventId}`;
    kept.delete(key);
    kept.set(key, result);
    if (kept.size > KEPT) kept.delete(kept.keys().next().value!);
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://tap");
    if (req.method === "GET" && url.pathname === TAP_PATH) {
      const found = kept.get(
        `${url.searchParams.get("channel") ?? ""}\n${url.searchParams.get("eventId") ?? ""}`,
      );
      res.writeHead(found ? 200 : 404, { "content-type": "application/json" });
      return void res.end(JSON.stringify(found ?? { error: "no answer for that event yet" }));
    }
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : await readBody(req);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined && !NOT_FORWARDED.has(name))
        headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    const answer = await fetch(new URL(url.pathname + url.search, workerUrl), {
      method: req.method,
      headers,
      ...(body !== undefined ? { body } : {}),
      redirect: "manual",
    });
    const text = await answer.text();
    if (req.method === "POST" && url.pathname === "/internal/companion/events" && answer.ok)
      record(body ?? "", text);
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!NOT_FORWARDED.has(name)) out[name] = value;
    });
    res.writeHead(answer.status, out);
    res.end(text);
  }

  function record(requestText: string, answerText: string) {
    try {
      const request = eventsRequestSchema.safeParse(JSON.parse(requestText));
      const answer = eventsAnswerSchema.safeParse(JSON.parse(answerText));
      if (request.success && answer.success)
        for (const result of answer.data.results) keep(request.data.channel, result);
    } catch {
      // Not JSON: the companion will log the Worker's complaint itself.
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // The Worker is unreachable (stopping, restarting): the companion sees what it would see.
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `simulate tap: ${String(error)}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What `simulate` reads: the Worker's answer for one socket event, once the companion has had it. */
export async function tappedResult(
  tapUrl: string,
  channel: string,
  eventId: string,
): Promise<TappedResult | undefined> {
  const url = new URL(TAP_PATH, tapUrl);
  url.searchParams.set("channel", channel);
  url.searchParams.set("eventId", eventId);
  const res = await fetch(url);
  if (res.status === 404) {
    await res.body?.cancel();
    return undefined;
  }
  return tappedResultSchema.parse(await res.json());
}
