import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash, randomBytes } from "node:crypto";
import {
  controlBody,
  fakeServer,
  json,
  parseMultipart,
} from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";

/**
 * A fake Feishu / Lark Open Platform on loopback, speaking its wire format (open-apis, JSON answers
 * `{code, msg, data}`):
 *   POST /open-apis/auth/v3/tenant_access_token/internal {app_id, app_secret}
 *        → {code: 0, msg: "ok", tenant_access_token: "t-…", expire}; unknown app or wrong secret → code 10014
 *   POST /open-apis/im/v1/messages?receive_id_type=chat_id {receive_id, msg_type, content, uuid?}
 *   POST /open-apis/im/v1/messages/{message_id}/reply     {msg_type, content, uuid?, reply_in_thread?}
 *        → {code: 0, data: {message_id, chat_id, thread_id?, …}}; a uuid seen within the hour returns the
 *        first message and sends nothing; a reply to a message the fake does not know → code 230011
 *   POST /open-apis/im/v1/files (multipart file_type, file_name, file; ≤ 30 MB) → {data: {file_key}} and
 *   POST /open-apis/im/v1/images (multipart image_type=message, image; ≤ 10 MB) → {data: {image_key}};
 *   a file/image/audio message names the key, and the delivered message keeps the file (name, size, SHA-256)
 *   POST /open-apis/im/v1/messages/{message_id}/reactions {reaction_type: {emoji_type}} → {data: {reaction_id}}
 *   DELETE /open-apis/im/v1/messages/{message_id}/reactions/{reaction_id}
 *   GET  /open-apis/im/v1/messages/{message_id}/resources/{key}?type=image|file → the bytes
 *   DELETE /open-apis/im/v1/messages/{message_id}          recall a bot message (gone from the chat)
 *   CardKit (streaming cards): POST /open-apis/cardkit/v1/cards {type: "card_json", data} → {card_id};
 *   PUT …/cards/{card_id}/elements/{element_id}/content {content, sequence, uuid};
 *   PATCH …/cards/{card_id}/settings {settings: '{"config":{"streaming_mode":false}}', sequence, uuid}.
 *   `sequence` must exceed the card's last one (else 300317), content needs streaming on (else
 *   300309), a repeated uuid changes nothing; an interactive message {"type":"card","data":{card_id}}
 *   shows the card, and the messages listing reads its current text. Unknown card → 300301 (the
 *   fake's choice; Feishu's exact code for it is not documented where we looked).
 * Auth: `Authorization: Bearer <tenant token>`; a token the fake did not issue, or one past its
 * `expire`, or revoked → HTTP 400 code 99991663. Frequency limit (scripted) → HTTP 429 code 99991400
 * with `x-ogw-ratelimit-reset`.
 *
 * Control endpoints:
 *   POST /_control/app {app_id, app_secret}           an app the token endpoint knows
 *   POST /_control/token-lifetime {seconds}           `expire` of tokens issued from now on (default 7200)
 *   POST /_control/revoke-tokens                      every issued token is refused from now on
 *   POST /_control/message {message_id, chat_id}      a user message the platform holds (reply target)
 *   POST /_control/resource {message_id, key, content} what the resource API serves
 *   POST /_control/script {api: "send"|"reply"|"reaction"|"token", chat?, times?, status?, code?, dropConnection?}
 *   GET  /_control/calls?api=&chat=                   recorded calls
 *   GET  /_control/messages?chat=                     delivered bot messages in order {chat_id, text, via, thread, reply_to, message_id, uuid, card_id?, streaming?}
 */

export interface FakeFeishuApi {
  url: string;
  stop(): Promise<void>;
}

interface Script {
  api: string;
  chat?: string;
  times: number;
  status?: number;
  code?: number;
  dropConnection?: boolean;
}

interface Card {
  id: string;
  elementId: string;
  text: string;
  streaming: boolean;
  sequence: number;
  uuids: Set<string>;
  chat?: string;
}

interface Delivered {
  card_id?: string;
  chat_id: string;
  text: string;
  msg_type: string;
  via: "create" | "reply";
  thread: boolean;
  reply_to?: string;
  message_id: string;
  uuid?: string;
  at: number;
  /** The uploaded file a file/image/audio message names. */
  file?: { name: string; type: string; size: number; sha256: string };
}

interface Call {
  api: string;
  chat?: string;
  body: unknown;
  token: string;
  status: number;
  code: number;
  at: number;
}

export async function startFakeFeishuApi(
  options: { apps?: Record<string, string> } = {},
): Promise<FakeFeishuApi> {
  const apps = new Map<string, string>(Object.entries(options.apps ?? {}));
  const issued = new Map<string, number>(); // token → expiresAt
  let lifetimeSeconds = 7200;
  let calls: Call[] = [];
  let delivered: Delivered[] = [];
  let scripts: Script[] = [];
  const userMessages = new Map<string, string>(); // message_id → chat_id
  const byUuid = new Map<string, { message: Delivered; at: number }>();
  const resources = new Map<string, Buffer>();
  const cards = new Map<string, Card>();
  /** Files and images uploaded (im/v1/files, im/v1/images) by key; a message names one by its key. */
  const uploads = new Map<string, { name: string; type: string; size: number; sha256: string }>();
  const fileOf = (msgType: string, content: string) => {
    if (!["file", "image", "audio"].includes(msgType)) return undefined;
    const parsed = parseJson(content) as { file_key?: unknown; image_key?: unknown } | undefined;
    return uploads.get(String(parsed?.file_key ?? parsed?.image_key ?? ""));
  };
  let nextId = 1;

  const server = fakeServer(handle);

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    raw: string,
    bytes: Buffer,
  ) {
    if (url.pathname.startsWith("/_control/")) return control(url, raw, res);
    const method = req.method ?? "GET";
    let body: Record<string, unknown> = {};
    const upload = await parseMultipart(req.headers["content-type"], bytes);
    if (upload && method === "POST" && /^\/open-apis\/im\/v1\/(files|images)$/.test(url.pathname)) {
      const image = url.pathname.endsWith("/images");
      const call = record(image ? "image-upload" : "file-upload", undefined, upload.fields, "");
      if (!authorized(req))
        return answer(res, call, 400, 99991663, {}, "Invalid access token for authorization.");
      const file = upload.files.find((f) => f.field === (image ? "image" : "file"));
      if (!file?.bytes.byteLength)
        return answer(res, call, 400, 234001, {}, "Invalid request param.");
      if (
        image
          ? upload.fields.image_type !== "message"
          : !upload.fields.file_type || !upload.fields.file_name
      )
        return answer(res, call, 400, 234001, {}, "Invalid request param.");
      if (file.bytes.byteLength > (image ? 10 : 30) * 1024 * 1024)
        return answer(res, call, 400, 234006, {}, "The file size exceed the max value.");
      const key = `${image ? "img" : "file"}_v3_${randomBytes(8).toString("hex")}`;
      uploads.set(key, {
        name: image ? file.name : upload.fields.file_name!,
        type: image ? "image" : upload.fields.file_type!,
        size: file.bytes.byteLength,
        sha256: createHash("sha256").update(file.bytes).digest("hex"),
      });
      return answer(res, call, 200, 0, image ? { image_key: key } : { file_key: key });
    }
    if (raw && !upload) {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return json(res, 400, { code: 9499, msg: "Bad Request" });
      }
    }

    if (url.pathname === "/open-apis/auth/v3/tenant_access_token/internal" && method === "POST") {
      const call = record("token", undefined, body, "");
      const script = takeScript("token", undefined);
      if (script) return answer(res, call, script.status ?? 500, script.code ?? 99991400, {});
      if (!apps.has(String(body.app_id)) || apps.get(String(body.app_id)) !== body.app_secret)
        return answer(res, call, 400, 10014, {}, "app secret invalid");
      const token = `t-${randomBytes(12).toString("hex")}`;
      issued.set(token, Date.now() + lifetimeSeconds * 1000);
      call.status = 200;
      return json(res, 200, {
        code: 0,
        msg: "ok",
        tenant_access_token: token,
        expire: lifetimeSeconds,
      });
    }

    const cardPath =
      /^\/open-apis\/cardkit\/v1\/cards(?:\/([^/]+)(?:\/(settings|elements\/([^/]+)\/content))?)?$/.exec(
        url.pathname,
      );
    if (cardPath) return cardApi(req, res, method, body, cardPath);
    const recall = /^\/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(url.pathname);
    if (recall && method === "DELETE") {
      const id = decodeURIComponent(recall[1]!);
      const call = record("recall", delivered.find((m) => m.message_id === id)?.chat_id, {}, "");
      if (!authorized(req))
        return answer(res, call, 400, 99991663, {}, "Invalid access token for authorization.");
      const before = delivered.length;
      delivered = delivered.filter((m) => m.message_id !== id);
      return before === delivered.length
        ? answer(res, call, 400, 230011, {}, "The message was withdrawn.")
        : answer(res, call, 200, 0, {});
    }

    const reply = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reply$/.exec(url.pathname);
    const reactions = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reactions(?:\/([^/]+))?$/.exec(
      url.pathname,
    );
    const resource = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/resources\/([^/]+)$/.exec(
      url.pathname,
    );
    const api =
      url.pathname === "/open-apis/im/v1/messages" && method === "POST"
        ? "send"
        : reply && method === "POST"
          ? "reply"
          : reactions
            ? "reaction"
            : resource && method === "GET"
              ? "resource"
              : undefined;
    if (!api) return json(res, 404, { code: 404, msg: "404 page not found" });
    const chat =
      api === "send"
        ? str(body.receive_id)
        : userMessages.get(decodeURIComponent((reply ?? reactions ?? resource)![1]!));
    const auth = String(req.headers.authorization ?? "");
    const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
    const call = record(api, chat, body, token ? `…${token.slice(-4)}` : "");
    const expiresAt = issued.get(token);
    if (expiresAt === undefined || expiresAt < Date.now())
      return answer(
        res,
        call,
        400,
        99991663,
        {},
        "Invalid access token for authorization. Please make a request with token attached.",
      );
    const script = takeScript(api, chat);
    if (script && !script.dropConnection) {
      const status = script.status ?? 429;
      const headers: Record<string, string> =
        status === 429 ? { "x-ogw-ratelimit-limit": "5", "x-ogw-ratelimit-reset": "1" } : {};
      return answer(
        res,
        call,
        status,
        script.code ?? (status === 429 ? 99991400 : 1),
        {},
        status === 429 ? "request trigger frequency limit" : "scripted failure",
        headers,
      );
    }
    const drop = () => {
      if (script?.dropConnection) {
        req.socket.destroy();
        return true;
      }
      return false;
    };

    if (api === "resource") {
      const bytes = resources.get(
        `${decodeURIComponent(resource![1]!)}/${decodeURIComponent(resource![2]!)}`,
      );
      if (!bytes || !["image", "file"].includes(url.searchParams.get("type") ?? ""))
        return answer(res, call, 400, 234003, {}, "File not in msg.");
      call.status = 200;
      res.writeHead(200, {
        "content-type": "application/octet-stream",
        "content-length": String(bytes.byteLength),
      });
      return res.end(bytes);
    }
    if (api === "reaction") {
      if (!chat) return answer(res, call, 400, 231003, {}, "The message is not found");
      if (drop()) return;
      if (method === "POST")
        return answer(res, call, 200, 0, {
          reaction_id: `r-${nextId++}`,
          reaction_type: body.reaction_type,
        });
      return answer(res, call, 200, 0, { reaction_id: reactions![2] });
    }

    // send / reply
    if (api === "send" && url.searchParams.get("receive_id_type") !== "chat_id")
      return answer(res, call, 400, 230001, {}, "invalid receive_id_type");
    if (!chat)
      return answer(
        res,
        call,
        400,
        api === "reply" ? 230011 : 230001,
        {},
        api === "reply" ? "The message was withdrawn." : "invalid receive_id",
      );
    const invalid = validateContent(str(body.msg_type), str(body.content));
    if (invalid) return answer(res, call, 400, 230001, {}, invalid);
    const cardId =
      str(body.msg_type) === "interactive" ? cardReference(str(body.content)!) : undefined;
    if (cardId !== undefined && !cards.has(cardId))
      return answer(res, call, 400, 230099, {}, "card_id not found");
    const uuid = str(body.uuid);
    if (uuid !== undefined && uuid.length > 50)
      return answer(res, call, 400, 99992402, {}, "field validation failed: uuid");
    const seen = uuid ? byUuid.get(uuid) : undefined;
    if (seen && Date.now() - seen.at < 3_600_000) {
      if (drop()) return;
      return answer(res, call, 200, 0, messageData(seen.message));
    }
    if (cardId) cards.get(cardId)!.chat = chat;
    const message: Delivered = {
      ...(cardId ? { card_id: cardId } : {}),
      chat_id: chat,
      text: postText(str(body.msg_type)!, str(body.content)!),
      ...(fileOf(str(body.msg_type)!, str(body.content)!)
        ? { file: fileOf(str(body.msg_type)!, str(body.content)!) }
        : {}),
      msg_type: str(body.msg_type)!,
      via: api === "reply" ? "reply" : "create",
      thread: body.reply_in_thread === true,
      ...(api === "reply" ? { reply_to: decodeURIComponent(reply![1]!) } : {}),
      message_id: `om_bot${String(nextId++).padStart(8, "0")}`,
      ...(uuid ? { uuid } : {}),
      at: Date.now(),
    };
    delivered.push(message);
    if (uuid) byUuid.set(uuid, { message, at: Date.now() });
    if (drop()) return;
    return answer(res, call, 200, 0, messageData(message));
  }

  function authorized(req: IncomingMessage): boolean {
    const auth = String(req.headers.authorization ?? "");
    const expiresAt = issued.get(auth.startsWith("Bearer ") ? auth.slice(7) : "");
    return expiresAt !== undefined && expiresAt >= Date.now();
  }

  /** CardKit: create a card entity, stream its markdown element, change its settings. */
  function cardApi(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    body: Record<string, unknown>,
    path: RegExpExecArray,
  ) {
    const [, rawId, sub, elementId] = path;
    const card = rawId ? cards.get(decodeURIComponent(rawId)) : undefined;
    const api = !rawId ? "card.create" : sub === "settings" ? "card.settings" : "card.content";
    const call = record(api, card?.chat, body, "");
    if (!authorized(req))
      return answer(res, call, 400, 99991663, {}, "Invalid access token for authorization.");
    const script = takeScript(api, card?.chat);
    if (script)
      return answer(
        res,
        call,
        script.status ?? 429,
        script.code ?? 99991400,
        {},
        "scripted failure",
      );
    if (!rawId) {
      if (method !== "POST" || body.type !== "card_json" || typeof body.data !== "string")
        return answer(res, call, 400, 99992402, {}, "field validation failed");
      const json = parseJson(body.data) as
        | {
            schema?: string;
            config?: Record<string, unknown>;
            body?: { elements?: Array<Record<string, unknown>> };
          }
        | undefined;
      const element = json?.body?.elements?.find(
        (e) => e.tag === "markdown" && typeof e.element_id === "string",
      );
      if (json?.schema !== "2.0" || !element)
        return answer(
          res,
          call,
          400,
          99992402,
          {},
          "card json 2.0 with a markdown element expected",
        );
      if (json.config?.streaming_mode === true && json.config.update_multi === false)
        return answer(
          res,
          call,
          400,
          99992402,
          {},
          "streaming cards must be shared (update_multi)",
        );
      const id = `7${String(nextId++).padStart(18, "0")}`;
      cards.set(id, {
        id,
        elementId: String(element.element_id),
        text: String(element.content ?? ""),
        streaming: json.config?.streaming_mode === true,
        sequence: 0,
        uuids: new Set(),
      });
      return answer(res, call, 200, 0, { card_id: id });
    }
    if (!card) return answer(res, call, 400, 300301, {}, "card not found");
    const sequence = body.sequence;
    const uuid = str(body.uuid);
    if (typeof sequence !== "number" || !Number.isInteger(sequence) || sequence < 1)
      return answer(res, call, 400, 99992402, {}, "field validation failed: sequence");
    if (uuid && card.uuids.has(uuid)) return answer(res, call, 200, 0, {});
    if (sequence <= card.sequence)
      return answer(res, call, 400, 300317, {}, "sequence number compare failed");
    if (sub === "settings") {
      if (method !== "PATCH") return answer(res, call, 404, 404, {}, "404 page not found");
      const settings = parseJson(str(body.settings) ?? "") as
        | { config?: { streaming_mode?: unknown } }
        | undefined;
      if (!settings)
        return answer(res, call, 400, 99992402, {}, "field validation failed: settings");
      if (typeof settings.config?.streaming_mode === "boolean")
        card.streaming = settings.config.streaming_mode;
    } else {
      if (method !== "PUT" || typeof body.content !== "string")
        return answer(res, call, 400, 99992402, {}, "field validation failed: content");
      if (decodeURIComponent(elementId!) !== card.elementId)
        return answer(res, call, 400, 300302, {}, "element not found");
      if (!card.streaming) return answer(res, call, 400, 300309, {}, "streaming mode is closed");
      card.text = body.content;
    }
    card.sequence = sequence;
    if (uuid) card.uuids.add(uuid);
    return answer(res, call, 200, 0, {});
  }

  function record(api: string, chat: string | undefined, body: unknown, token: string): Call {
    const call: Call = { api, chat, body, token, status: 0, code: -1, at: Date.now() };
    calls.push(call);
    return call;
  }

  function takeScript(api: string, chat: string | undefined): Script | undefined {
    const script = scripts.find(
      (s) => s.api === api && (!s.chat || s.chat === chat) && s.times > 0,
    );
    if (script) script.times -= 1;
    return script;
  }

  function answer(
    res: ServerResponse,
    call: Call,
    status: number,
    code: number,
    data: unknown,
    msg = code === 0 ? "success" : "error",
    headers: Record<string, string> = {},
  ) {
    call.status = status;
    call.code = code;
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    return json(res, status, { code, msg, data });
  }

  async function control(url: URL, raw: string, res: ServerResponse) {
    const body = controlBody(raw);
    switch (url.pathname) {
      case "/_control/app":
        apps.set(String(body.app_id), String(body.app_secret));
        return json(res, 200, { ok: true });
      case "/_control/token-lifetime":
        lifetimeSeconds = Number(body.seconds ?? 7200);
        return json(res, 200, { ok: true });
      case "/_control/revoke-tokens":
        issued.clear();
        return json(res, 200, { ok: true });
      case "/_control/message":
        userMessages.set(String(body.message_id), String(body.chat_id));
        return json(res, 200, { ok: true });
      case "/_control/resource":
        resources.set(
          `${String(body.message_id)}/${String(body.key)}`,
          Buffer.from(String(body.content ?? ""), "utf8"),
        );
        return json(res, 200, { ok: true });
      case "/_control/script":
        scripts.push({ ...(body as unknown as Script), times: Number(body.times ?? 1) });
        return json(res, 200, { ok: true });
      case "/_control/calls": {
        const api = url.searchParams.get("api");
        const chat = url.searchParams.get("chat");
        return json(
          res,
          200,
          calls.filter((c) => (!api || c.api === api) && (!chat || c.chat === chat)),
        );
      }
      case "/_control/messages": {
        const chat = url.searchParams.get("chat");
        const shown = delivered
          .filter((m) => !chat || m.chat_id === chat)
          .map((m) =>
            m.card_id
              ? {
                  ...m,
                  text: cards.get(m.card_id)!.text,
                  streaming: cards.get(m.card_id)!.streaming,
                }
              : m,
          );
        return json(res, 200, shown);
      }
      case "/_control/reset":
        calls = [];
        delivered = [];
        scripts = [];
        return json(res, 200, { ok: true });
    }
    return json(res, 404, { message: "unknown control endpoint" });
  }

  return listenOnLoopback(server);
}

function messageData(message: Delivered) {
  return {
    message_id: message.message_id,
    chat_id: message.chat_id,
    msg_type: message.msg_type,
    create_time: String(message.at),
    ...(message.thread ? { thread_id: `omt_${message.message_id}` } : {}),
  };
}

/** Feishu checks `content` is a JSON string matching `msg_type`; a post's `md`/`text` elements carry its text. */
function validateContent(
  msgType: string | undefined,
  content: string | undefined,
): string | undefined {
  if (!msgType || !content) return "msg_type and content are required";
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return "content is not a JSON string";
  }
  if (Buffer.byteLength(content) > 30 * 1024) return "content too large";
  if (msgType === "text")
    return typeof (parsed as { text?: unknown }).text === "string"
      ? undefined
      : "text content needs text";
  if (msgType === "file" || msgType === "audio")
    return typeof (parsed as { file_key?: unknown }).file_key === "string"
      ? undefined
      : `${msgType} content needs file_key`;
  if (msgType === "image")
    return typeof (parsed as { image_key?: unknown }).image_key === "string"
      ? undefined
      : "image content needs image_key";
  if (msgType === "post") {
    const locales = Object.values(parsed as Record<string, unknown>);
    const ok =
      locales.length > 0 &&
      locales.every((l) => Array.isArray((l as { content?: unknown }).content));
    return ok ? undefined : "post content needs <locale>.content";
  }
  return undefined;
}

/** `{"type":"card","data":{"card_id"}}` names a card entity; a whole card JSON does not. */
function cardReference(content: string): string | undefined {
  const parsed = parseJson(content) as { type?: unknown; data?: { card_id?: unknown } } | undefined;
  return parsed?.type === "card" ? String(parsed.data?.card_id ?? "") : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function postText(msgType: string, content: string): string {
  const parsed = JSON.parse(content) as Record<string, unknown>;
  if (msgType === "file" || msgType === "image" || msgType === "audio") return "";
  if (msgType === "text") return String(parsed.text);
  if (msgType === "interactive") {
    const elements =
      (parsed.body as { elements?: Array<{ tag?: string; content?: string }> } | undefined)
        ?.elements ?? [];
    return elements
      .filter((e) => e.tag === "markdown")
      .map((e) => e.content ?? "")
      .join("\n");
  }
  const body = Object.values(parsed)[0] as { content: Array<Array<{ text?: string }>> };
  return body.content.map((p) => p.map((e) => e.text ?? "").join("")).join("\n");
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
