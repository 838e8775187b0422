import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { controlBody, fakeServer, json } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import {
  type FetchedMedia,
  fetchLikePlatform,
} from "../../../../scripts/simulate/fakes/fetch-media.ts";

/**
 * A fake LINE Messaging API on loopback (the API host and the content host in one), speaking LINE's
 * wire format (line/line-openapi messaging-api.yml):
 *   POST /v2/bot/message/reply   {replyToken, messages[1..5]}           200 {sentMessages:[{id}]}
 *        a reply token works once and only while fresh; otherwise 400 {"message":"Invalid reply token"}
 *   POST /v2/bot/message/push    {to, messages[1..5]} + X-Line-Retry-Key 200 {sentMessages}
 *        a retry key seen before → 409 {"message":"The retry key is already accepted", sentMessages}
 *        with `x-line-accepted-request-id` (the first request's id), and nothing is sent again;
 *        a key that is not a hexadecimal UUID → 400
 *   POST /v2/bot/chat/loading/start {chatId: U…, loadingSeconds 5..60, multiple of 5}   202 {}
 *   GET  /v2/bot/message/{id}/content                                     the bytes, or 404
 *   messages may be `text`, `image` {originalContentUrl, previewImageUrl} or `audio`
 *   {originalContentUrl, duration ms}: links must be HTTPS (plain http only to loopback, so
 *   `edgeclaw simulate` works against `npm run dev`) and at most 2000 characters, else 400. The
 *   fake then fetches the link as LINE's app would and records what it got on the message.
 * Every answer carries `x-line-request-id`. Auth: `Authorization: Bearer <token>`; no token, or
 * one starting with "revoked" (a token LINE no longer honours), → 401. A text longer than
 * 5000 characters, or more than five messages, → 400 with `details`, as LINE does.
 *
 * Control endpoints (tests inside workerd call these by plain fetch):
 *   POST /_control/reply-token {replyToken, to, ttlMs?}  a token LINE issued for an event in `to`
 *   POST /_control/script {api: "reply"|"push"|"loading"|"content", to?, times?, status?, retryAfter?, message?, dropConnection?}
 *        the next `times` (default 1) matching calls fail with `status` (429: Retry-After when
 *        `retryAfter` is given); `dropConnection` applies the call, then destroys the socket
 *   POST /_control/content {messageId, content?, bytes?, contentType?}   what the content API serves
 *   GET  /_control/calls?api=&to=       recorded calls (token redacted to its last 4)
 *   GET  /_control/messages?to=         delivered messages in order: {to, text, via: "reply"|"push", at}
 *   POST /_control/reset
 */

export interface FakeLineApi {
  url: string;
  stop(): Promise<void>;
}

interface Script {
  api: string;
  to?: string;
  times: number;
  status?: number;
  retryAfter?: number;
  message?: string;
  dropConnection?: boolean;
}

interface Delivered {
  to: string;
  text: string;
  type: string;
  url?: string;
  duration?: number;
  fetched?: FetchedMedia;
  via: "reply" | "push";
  id: string;
  at: number;
}

interface Call {
  api: string;
  to?: string;
  body: unknown;
  retryKey?: string;
  token: string;
  status: number;
  at: number;
}

const TEXT_LIMIT = 5000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function startFakeLineApi(): Promise<FakeLineApi> {
  let calls: Call[] = [];
  let delivered: Delivered[] = [];
  let scripts: Script[] = [];
  let replyTokens = new Map<string, { to: string; expiresAt: number; used: boolean }>();
  let retryKeys = new Map<string, { requestId: string; sent: Array<{ id: string }> }>();
  const contents = new Map<string, { body: Buffer; contentType: string }>();
  let nextId = 100_000_000_000_000;

  const server = fakeServer(handle);

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL, raw: string) {
    if (url.pathname.startsWith("/_control/")) return control(url, req.method ?? "GET", raw, res);
    const requestId = randomUUID();
    res.setHeader("x-line-request-id", requestId);
    const auth = String(req.headers.authorization ?? "");
    const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
    const content = /^\/v2\/bot\/message\/([^/]+)\/content$/.exec(url.pathname);
    const api = content
      ? "content"
      : (
          {
            "/v2/bot/message/reply": "reply",
            "/v2/bot/message/push": "push",
            "/v2/bot/chat/loading/start": "loading",
          } as Record<string, string>
        )[url.pathname];
    if (!api) return json(res, 404, { message: "Not found" });
    let body: Record<string, unknown> = {};
    if (api !== "content") {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return json(res, 400, { message: "The request body has 1 error(s)" });
      }
    }
    const to =
      api === "push"
        ? str(body.to)
        : api === "loading"
          ? str(body.chatId)
          : api === "reply"
            ? replyTokens.get(str(body.replyToken) ?? "")?.to
            : content?.[1];
    const retryKey = req.headers["x-line-retry-key"]
      ? String(req.headers["x-line-retry-key"])
      : undefined;
    const call: Call = {
      api,
      to,
      body,
      retryKey,
      token: token ? `…${token.slice(-4)}` : "",
      status: 0,
      at: Date.now(),
    };
    calls.push(call);
    const answer = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      call.status = status;
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      return json(res, status, payload);
    };

    if (!token || token.startsWith("revoked")) {
      return answer(401, {
        message:
          "Authentication failed. Confirm that the access token in the authorization header is valid.",
      });
    }
    const script = scripts.find((s) => s.api === api && (!s.to || s.to === to) && s.times > 0);
    if (script) {
      script.times -= 1;
      if (!script.dropConnection) {
        return answer(
          script.status ?? 500,
          {
            message:
              script.message ??
              (script.status === 429 ? "Too Many Requests" : "Internal server error"),
          },
          script.status === 429 && script.retryAfter !== undefined
            ? { "retry-after": String(script.retryAfter) }
            : {},
        );
      }
    }
    const drop = () => {
      if (script?.dropConnection) {
        req.socket.destroy();
        return true;
      }
      return false;
    };

    if (api === "content") {
      const file = contents.get(content![1]!);
      if (!file) return answer(404, { message: "Not found" });
      if (drop()) return;
      call.status = 200;
      res.writeHead(200, {
        "content-type": file.contentType,
        "content-length": String(file.body.byteLength),
      });
      return res.end(file.body);
    }
    if (api === "loading") {
      if (!to || !/^U[0-9a-f]{32}$/.test(to))
        return answer(400, {
          message: "The property, 'chatId', in the request body is invalid (line 1, column 12)",
        });
      const seconds = body.loadingSeconds === undefined ? 20 : Number(body.loadingSeconds);
      if (!Number.isInteger(seconds) || seconds < 5 || seconds > 60 || seconds % 5 !== 0)
        return answer(400, {
          message: "The request body has 1 error(s)",
          details: [{ message: "invalid", property: "loadingSeconds" }],
        });
      if (drop()) return;
      return answer(202, {});
    }

    const messages = Array.isArray(body.messages)
      ? (body.messages as Array<Record<string, unknown>>)
      : [];
    const invalid = validateMessages(messages);
    if (invalid)
      return answer(400, { message: "The request body has 1 error(s)", details: [invalid] });

    if (api === "reply") {
      if (retryKey) return answer(400, { message: "The retry key cannot be used with this API" });
      const issued = replyTokens.get(str(body.replyToken) ?? "");
      if (!issued || issued.used || issued.expiresAt < Date.now())
        return answer(400, { message: "Invalid reply token" });
      issued.used = true;
      const sent = deliver(issued.to, messages, "reply");
      if (drop()) return;
      return answer(200, { sentMessages: sent });
    }

    // push
    if (!to || !/^[UCR][0-9a-f]{32}$/.test(to))
      return answer(400, {
        message: "The property, 'to', in the request body is invalid (line 1, column 7)",
      });
    if (retryKey !== undefined) {
      if (!UUID.test(retryKey))
        return answer(400, { message: "The value for the 'X-Line-Retry-Key' header is invalid" });
      const seen = retryKeys.get(retryKey);
      if (seen)
        return answer(
          409,
          { message: "The retry key is already accepted", sentMessages: seen.sent },
          { "x-line-accepted-request-id": seen.requestId },
        );
    }
    const sent = deliver(to, messages, "push");
    if (retryKey !== undefined) retryKeys.set(retryKey, { requestId, sent });
    if (drop()) return;
    return answer(200, { sentMessages: sent });
  }

  function deliver(to: string, messages: Array<Record<string, unknown>>, via: "reply" | "push") {
    return messages.map((message) => {
      const id = String(nextId++);
      const entry: Delivered = {
        to,
        text: String(message.text ?? ""),
        type: String(message.type),
        via,
        id,
        at: Date.now(),
      };
      if (typeof message.originalContentUrl === "string") {
        entry.url = message.originalContentUrl;
        if (typeof message.duration === "number") entry.duration = message.duration;
        void fetchLikePlatform(entry.url).then((fetched) => (entry.fetched = fetched));
      }
      delivered.push(entry);
      return { id, quoteToken: `q${id}` };
    });
  }

  async function control(url: URL, method: string, raw: string, res: ServerResponse) {
    const body = controlBody(raw);
    switch (url.pathname) {
      case "/_control/reply-token":
        replyTokens.set(String(body.replyToken), {
          to: String(body.to),
          expiresAt: Date.now() + Number(body.ttlMs ?? 60_000),
          used: false,
        });
        return json(res, 200, { ok: true });
      case "/_control/script":
        scripts.push({ ...(body as unknown as Script), times: Number(body.times ?? 1) });
        return json(res, 200, { ok: true });
      case "/_control/content":
        contents.set(String(body.messageId), {
          body:
            body.bytes !== undefined
              ? Buffer.alloc(Number(body.bytes), "a")
              : Buffer.from(String(body.content ?? ""), "utf8"),
          contentType: String(body.contentType ?? "text/plain"),
        });
        return json(res, 200, { ok: true });
      case "/_control/calls": {
        const api = url.searchParams.get("api");
        const to = url.searchParams.get("to");
        return json(
          res,
          200,
          calls.filter((c) => (!api || c.api === api) && (!to || c.to === to)),
        );
      }
      case "/_control/messages": {
        const to = url.searchParams.get("to");
        return json(
          res,
          200,
          delivered.filter((m) => !to || m.to === to),
        );
      }
      case "/_control/reset":
        if (method !== "POST") break;
        calls = [];
        delivered = [];
        scripts = [];
        replyTokens = new Map();
        retryKeys = new Map();
        contents.clear();
        return json(res, 200, { ok: true });
    }
    return json(res, 404, { message: "unknown control endpoint" });
  }

  return listenOnLoopback(server);
}

function validateMessages(
  messages: Array<Record<string, unknown>>,
): { message: string; property: string } | undefined {
  if (messages.length < 1 || messages.length > 5)
    return { message: "Size must be between 1 and 5", property: "messages" };
  for (const [index, message] of messages.entries()) {
    if (message.type === "image" || message.type === "audio") {
      const links =
        message.type === "image"
          ? ["originalContentUrl", "previewImageUrl"]
          : ["originalContentUrl"];
      for (const property of links)
        if (!mediaLinkOk(message[property]))
          return {
            message: "Must be a valid HTTPS URL",
            property: `messages[${index}].${property}`,
          };
      if (
        message.type === "audio" &&
        !(Number.isInteger(message.duration) && Number(message.duration) > 0)
      )
        return { message: "Must be a positive number", property: `messages[${index}].duration` };
      continue;
    }
    if (message.type !== "text") continue;
    const text = String(message.text ?? "");
    if (!text) return { message: "Must not be empty", property: `messages[${index}].text` };
    if (text.length > TEXT_LIMIT)
      return {
        message: `Length must be between 0 and ${TEXT_LIMIT}`,
        property: `messages[${index}].text`,
      };
  }
  return undefined;
}

/** LINE's rule for content links, with the fake's one allowance: http to loopback (dev). */
function mediaLinkOk(value: unknown): boolean {
  if (typeof value !== "string" || value.length > 2000) return false;
  try {
    const url = new URL(value);
    return (
      url.protocol === "https:" ||
      (url.protocol === "http:" && /^(127\.0\.0\.1|localhost|\[::1\])$/.test(url.hostname))
    );
  } catch {
    return false;
  }
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
