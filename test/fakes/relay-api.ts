import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { readBody } from "../../scripts/simulate/fakes/read-body.ts";
import { listenOnLoopback } from "../../scripts/simulate/fakes/listen.ts";

/**
 * The platform API of "relay", the test-only channel (test/channels/relay/): the smallest platform
 * that has what the pipeline tests need — an idempotency key. `POST /messages` with
 * `Authorization: Bearer <token>`, `Idempotency-Key: <key>` and JSON `{chat, thread?, text}` stores
 * the message and answers `{id}`; a repeat of a key answers the stored message's id and stores nothing
 * (as LINE's X-Line-Retry-Key and Feishu's uuid promise).
 *
 * Control endpoints:
 *   POST /_control/script   {chat, times?, hangMs}   the next `times` (default 1) sends to `chat` are
 *        stored, then answered only after `hangMs` (longer than the sender waits: an unknown outcome)
 *   GET  /_control/messages?chat=                    messages as stored
 *   GET  /_control/calls?chat=                       every send as received: {key, chat, text}
 */
export interface FakeRelayApi {
  url: string;
  stop(): Promise<void>;
}

interface Stored {
  id: string;
  key: string;
  chat: string;
  thread?: string;
  text: string;
}

export async function startFakeRelayApi(): Promise<FakeRelayApi> {
  const messages: Stored[] = [];
  const calls: Array<{ key: string; chat: string; text: string }> = [];
  const scripts: Array<{ chat: string; times: number; hangMs: number }> = [];

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://relay.local");
    const body = await readBody(req);
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (url.pathname === "/_control/script" && req.method === "POST") {
      const script = JSON.parse(body) as { chat: string; times?: number; hangMs: number };
      scripts.push({ chat: script.chat, times: script.times ?? 1, hangMs: script.hangMs });
      return json(200, { ok: true });
    }
    if (url.pathname === "/_control/messages")
      return json(
        200,
        messages.filter((m) => m.chat === url.searchParams.get("chat")),
      );
    if (url.pathname === "/_control/calls")
      return json(
        200,
        calls.filter((c) => c.chat === url.searchParams.get("chat")),
      );
    if (url.pathname !== "/messages" || req.method !== "POST")
      return json(404, { error: "not found" });
    if (!/^Bearer \S+$/.test(req.headers.authorization ?? ""))
      return json(401, { error: "unauthorized" });
    const key = req.headers["idempotency-key"];
    let sent: { chat?: unknown; thread?: unknown; text?: unknown };
    try {
      sent = JSON.parse(body) as typeof sent;
    } catch {
      return json(400, { error: "invalid json" });
    }
    if (
      typeof key !== "string" ||
      !key ||
      typeof sent.chat !== "string" ||
      typeof sent.text !== "string"
    )
      return json(400, { error: "chat, text and Idempotency-Key are required" });
    calls.push({ key, chat: sent.chat, text: sent.text });
    let stored = messages.find((m) => m.key === key);
    if (!stored) {
      stored = {
        id: `m${messages.length + 1}`,
        key,
        chat: sent.chat,
        text: sent.text,
        ...(typeof sent.thread === "string" ? { thread: sent.thread } : {}),
      };
      messages.push(stored);
    }
    const script = scripts.find((s) => s.chat === sent.chat && s.times > 0);
    if (script) {
      script.times -= 1;
      await new Promise((resolve) => setTimeout(resolve, script.hangMs));
    }
    return json(200, { id: stored.id });
  });
  return listenOnLoopback(server);
}
