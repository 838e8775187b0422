import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash } from "node:crypto";
import {
  fakeServer,
  json,
  parseMultipart,
  type UploadedFile,
} from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { parseTelegramHtml } from "./telegram-html.ts";

/**
 * A fake Telegram Bot API on loopback, speaking its wire format (https://core.telegram.org/bots/api):
 * `POST /bot<token>/<method>` with a JSON, form, multipart (uploads: sendDocument, sendPhoto,
 * sendVoice, sendAudio, each file kept as name, type, size and SHA-256) or query-string body; answers `{ ok: true, result }`
 * or `{ ok: false, error_code, description, parameters? }` with the matching HTTP status (429 carries
 * `parameters.retry_after`). Files at `GET /file/bot<token>/<file_path>` after getFile.
 * Tokens are `<digits>:<secret>`; anything else, or a secret ending in "invalid", is 401 Unauthorized.
 *
 * It behaves as Telegram does where edgeclaw depends on it: HTML markup is checked (bad markup →
 * 400 "can't parse entities"), text over 4096 visible characters → "message is too long", an edit to
 * the same text → "message is not modified", editing or deleting an unknown message → "… not found",
 * `message_thread_id: 1` on sendMessage → "message thread not found" (the General topic), message
 * ids count up per chat, setWebhook checks `secret_token`'s characters.
 *
 * Control endpoints (tests call them by plain fetch):
 *   POST /_control/script  {method, chatId?, times?, status?, retryAfter?, description?, dropConnection?, delayMs?}
 *        the next `times` (default 1) calls of `method` (in chat `chatId` when given) fail with HTTP
 *        `status` (429 → retry_after `retryAfter`, default 1), or `dropConnection`: the call is applied
 *        and the socket destroyed (the caller cannot know it worked). `delayMs` holds the answer first.
 *   POST /_control/file    {fileId, content | contentBase64, filePath?, size?}   a file getFile knows
 *   POST /_control/identity {botId, username}                          what getMe answers for a bot
 *   GET  /_control/calls?method=&chat_id=                              recorded calls (token cut to its last 4)
 *   GET  /_control/messages?chat_id=                                   the bot's messages (visible text, html, deleted)
 *   GET  /_control/webhook?bot_id=                                     the webhook a bot registered
 *   POST /_control/updates {botId, updates: [Update]}                  queue updates for getUpdates (long polling)
 *   GET  /_control/updates?bot_id=                                     {pending, confirmedOffset}: what getUpdates still holds
 *
 * getUpdates behaves as Telegram's: updates below `offset` are confirmed and forgotten; with none
 * waiting the call holds up to `timeout` seconds; a webhook set → 409 "can't use getUpdates method
 * while webhook is active"; a second concurrent call for the same bot ends the first with 409
 * "terminated by other getUpdates request".
 *   POST /_control/reset                                               forget everything
 */

export interface FakeTelegramApi {
  url: string;
  stop(): Promise<void>;
}

interface Script {
  method: string;
  chatId?: string;
  times: number;
  status?: number;
  retryAfter?: number;
  description?: string;
  dropConnection?: boolean;
  delayMs?: number;
}

export interface FakeTelegramMessage {
  chat_id: string;
  message_id: number;
  bot_id: string;
  /** What the user sees (markup applied). */
  text: string;
  /** As sent (HTML when parse_mode was HTML). */
  raw: string;
  parse_mode?: string;
  message_thread_id?: number;
  reply_to_message_id?: number;
  edits: number;
  deleted?: boolean;
  at: number;
  /** An uploaded file (sendDocument, sendPhoto, sendVoice, sendAudio); `text` is then its caption. */
  file?: { method?: string; name: string; type: string; size: number; sha256: string };
}

interface RecordedCall {
  method: string;
  args: Record<string, unknown>;
  token: string;
  at: number;
}

const MAX_TEXT = 4096;

export async function startFakeTelegramApi(): Promise<FakeTelegramApi> {
  let calls: RecordedCall[] = [];
  let messages: FakeTelegramMessage[] = [];
  let scripts: Script[] = [];
  const lastIds = new Map<string, number>();
  const files = new Map<string, { content: Buffer; filePath: string; size: number }>();
  const webhooks = new Map<string, Record<string, unknown>>();
  const usernames = new Map<string, string>();
  const polling = new Map<
    string,
    {
      pending: Array<{ update_id: number }>;
      confirmedOffset: number;
      waiting?: (conflict: boolean) => void;
    }
  >();
  const pollState = (botId: string) => {
    let state = polling.get(botId);
    if (!state) polling.set(botId, (state = { pending: [], confirmedOffset: 0 }));
    return state;
  };

  const server = fakeServer(handle);

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    body: string,
    raw: Buffer,
  ) {
    if (url.pathname.startsWith("/_control/")) return control(url, req.method ?? "GET", body, res);
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file) {
      calls.push({
        method: "file.download",
        args: { path: file[2] },
        token: `…${file[1]!.slice(-4)}`,
        at: Date.now(),
      });
      if (!validToken(file[1]!))
        return json(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
      const found = [...files.values()].find((f) => f.filePath === decodeURIComponent(file[2]!));
      if (!found) return json(res, 404, { ok: false, error_code: 404, description: "Not Found" });
      res.writeHead(200, {
        "content-type": "application/octet-stream",
        "content-length": String(found.content.byteLength),
      });
      return res.end(found.content);
    }
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
    if (!match) return json(res, 404, { ok: false, error_code: 404, description: "Not Found" });
    const token = match[1]!;
    const method = match[2]!;
    const upload = await parseMultipart(req.headers["content-type"], raw);
    const args = {
      ...Object.fromEntries(url.searchParams),
      ...(upload ? uploadArgs(upload) : parseArgs(body, req.headers["content-type"])),
    };
    calls.push({ method, args, token: `…${token.slice(-4)}`, at: Date.now() });
    if (!validToken(token))
      return json(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });

    const chatId = args.chat_id !== undefined ? String(args.chat_id) : undefined;
    const script = scripts.find(
      (s) => s.method === method && (!s.chatId || s.chatId === chatId) && s.times > 0,
    );
    if (script) script.times -= 1;
    if (script?.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
    if (script && !script.dropConnection && script.status) {
      if (script.status === 429) {
        const retryAfter = script.retryAfter ?? 1;
        return json(res, 429, {
          ok: false,
          error_code: 429,
          description: `Too Many Requests: retry after ${retryAfter}`,
          parameters: { retry_after: retryAfter },
        });
      }
      return json(res, script.status, {
        ok: false,
        error_code: script.status,
        description: script.description ?? "Internal Server Error",
      });
    }
    if (method === "getUpdates") {
      const [status, answer] = await getUpdates(token.split(":")[0]!, args);
      return json(res, status, answer);
    }
    const [status, answer] = apply(method, args, token);
    if (script?.dropConnection) return void req.socket.destroy();
    return json(res, status, answer);
  }

  function apply(
    method: string,
    args: Record<string, unknown>,
    token: string,
  ): [number, Record<string, unknown>] {
    const botId = token.split(":")[0]!;
    const bad = (description: string): [number, Record<string, unknown>] => [
      400,
      { ok: false, error_code: 400, description: `Bad Request: ${description}` },
    ];
    const ok = (result: unknown): [number, Record<string, unknown>] => [200, { ok: true, result }];
    const chatId = args.chat_id !== undefined ? String(args.chat_id) : undefined;
    const rendered = (): { visible: string } | { error: string } => {
      const text = typeof args.text === "string" ? args.text : "";
      if (!text.trim()) return { error: "Bad Request: message text is empty" };
      const parsed =
        args.parse_mode === "HTML" ? parseTelegramHtml(text) : { ok: true as const, visible: text };
      if (!parsed.ok) return { error: parsed.error };
      if (parsed.visible.length > MAX_TEXT) return { error: "Bad Request: message is too long" };
      return { visible: parsed.visible };
    };
    const findOwn = () =>
      messages.find(
        (m) =>
          m.chat_id === chatId &&
          m.message_id === Number(args.message_id) &&
          m.bot_id === botId &&
          !m.deleted,
      );
    switch (method) {
      case "getMe":
        return ok({
          id: Number(botId),
          is_bot: true,
          first_name: "edgeclaw test",
          username: usernames.get(botId) ?? "edgeclaw_test_bot",
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        });
      case "sendMessage": {
        if (!chatId) return bad("chat_id is empty");
        const thread =
          args.message_thread_id !== undefined ? Number(args.message_thread_id) : undefined;
        if (thread === 1) return bad("message thread not found");
        const text = rendered();
        if ("error" in text) return [400, { ok: false, error_code: 400, description: text.error }];
        const messageId = (lastIds.get(chatId) ?? 0) + 1;
        lastIds.set(chatId, messageId);
        const reply = args.reply_parameters as { message_id?: number } | undefined;
        messages.push({
          chat_id: chatId,
          message_id: messageId,
          bot_id: botId,
          text: text.visible,
          raw: String(args.text),
          parse_mode: typeof args.parse_mode === "string" ? args.parse_mode : undefined,
          message_thread_id: thread,
          reply_to_message_id: reply?.message_id,
          edits: 0,
          at: Date.now(),
        });
        return ok({
          message_id: messageId,
          date: Math.floor(Date.now() / 1000),
          chat: { id: Number(chatId), type: Number(chatId) < 0 ? "supergroup" : "private" },
          text: text.visible,
          ...(thread ? { message_thread_id: thread } : {}),
        });
      }
      case "sendDocument":
      case "sendPhoto":
      case "sendVoice":
      case "sendAudio": {
        if (!chatId) return bad("chat_id is empty");
        const field = {
          sendDocument: "document",
          sendPhoto: "photo",
          sendVoice: "voice",
          sendAudio: "audio",
        }[method]!;
        const file = args[field] as FakeTelegramMessage["file"] | string | undefined;
        // An upload is a multipart file part; a string here would be a file_id or URL, which edgeclaw never sends.
        if (!file || typeof file === "string") return bad(`there is no ${field} in the request`);
        if (file.size > (method === "sendPhoto" ? 10 : 50) * 1024 * 1024)
          return [413, { ok: false, error_code: 413, description: "Request Entity Too Large" }];
        const caption = typeof args.caption === "string" ? args.caption : "";
        const parsed =
          caption && args.parse_mode === "HTML"
            ? parseTelegramHtml(caption)
            : { ok: true as const, visible: caption };
        if (!parsed.ok) return bad(parsed.error);
        const messageId = (lastIds.get(chatId) ?? 0) + 1;
        lastIds.set(chatId, messageId);
        messages.push({
          chat_id: chatId,
          message_id: messageId,
          bot_id: botId,
          text: parsed.visible,
          raw: caption,
          parse_mode: typeof args.parse_mode === "string" ? args.parse_mode : undefined,
          message_thread_id:
            args.message_thread_id !== undefined ? Number(args.message_thread_id) : undefined,
          edits: 0,
          at: Date.now(),
          file: { ...file, method },
        });
        return ok({
          message_id: messageId,
          date: Math.floor(Date.now() / 1000),
          chat: { id: Number(chatId), type: Number(chatId) < 0 ? "supergroup" : "private" },
          [field]: { file_id: `f${chatId}-${messageId}`, file_size: file.size },
          ...(caption ? { caption: parsed.visible } : {}),
        });
      }
      case "editMessageText": {
        const found = findOwn();
        if (!found) return bad("message to edit not found");
        const text = rendered();
        if ("error" in text) return [400, { ok: false, error_code: 400, description: text.error }];
        if (found.raw === args.text && found.parse_mode === args.parse_mode) {
          return bad(
            "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
          );
        }
        found.text = text.visible;
        found.raw = String(args.text);
        found.parse_mode = typeof args.parse_mode === "string" ? args.parse_mode : undefined;
        found.edits += 1;
        return ok({ message_id: found.message_id, chat: { id: Number(chatId) }, text: found.text });
      }
      case "deleteMessage": {
        const found = findOwn();
        if (!found) return bad("message to delete not found");
        found.deleted = true;
        return ok(true);
      }
      case "sendChatAction":
        if (!chatId) return bad("chat_id is empty");
        return ok(true);
      case "answerCallbackQuery":
      case "setMessageReaction":
        return ok(true);
      case "getFile": {
        const file = files.get(String(args.file_id));
        if (!file) return bad("invalid file_id");
        return ok({
          file_id: args.file_id,
          file_unique_id: `u${String(args.file_id)}`,
          file_size: file.size,
          file_path: file.filePath,
        });
      }
      case "setWebhook": {
        const url = typeof args.url === "string" ? args.url : "";
        const secret = args.secret_token;
        if (secret !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(String(secret)))
          return bad("secret token contains unallowed characters");
        if (url && !url.startsWith("https://"))
          return bad("bad webhook: An HTTPS URL must be provided for webhook");
        if (!url) webhooks.delete(botId);
        else
          webhooks.set(botId, {
            url,
            secret_token: secret,
            allowed_updates: args.allowed_updates,
            max_connections: args.max_connections ?? 40,
            drop_pending_updates: args.drop_pending_updates,
          });
        return ok(true);
      }
      case "deleteWebhook":
        webhooks.delete(botId);
        return ok(true);
      case "getWebhookInfo": {
        const hook = webhooks.get(botId);
        return ok({
          url: hook?.url ?? "",
          has_custom_certificate: false,
          pending_update_count: 0,
          ...(hook
            ? { max_connections: hook.max_connections, allowed_updates: hook.allowed_updates }
            : {}),
        });
      }
      default:
        return [404, { ok: false, error_code: 404, description: "Not Found: method not found" }];
    }
  }

  async function getUpdates(
    botId: string,
    args: Record<string, unknown>,
  ): Promise<[number, Record<string, unknown>]> {
    const conflict = (description: string): [number, Record<string, unknown>] => [
      409,
      { ok: false, error_code: 409, description: `Conflict: ${description}` },
    ];
    if (webhooks.has(botId))
      return conflict(
        "can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      );
    const state = pollState(botId);
    // Telegram answers the older of two concurrent calls with a conflict.
    state.waiting?.(true);
    state.waiting = undefined;
    const offset = args.offset !== undefined ? Number(args.offset) : undefined;
    if (offset !== undefined && offset > state.confirmedOffset) {
      state.confirmedOffset = offset;
      state.pending = state.pending.filter((update) => update.update_id >= offset);
    }
    const limit = Math.min(100, Math.max(1, Number(args.limit ?? 100)));
    const ready = () => state.pending.slice(0, limit);
    if (!ready().length) {
      const timeoutMs = Math.min(50, Math.max(0, Number(args.timeout ?? 0))) * 1000;
      const conflicted = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => finish(false), timeoutMs);
        function finish(value: boolean) {
          clearTimeout(timer);
          if (state.waiting === finish) state.waiting = undefined;
          resolve(value);
        }
        state.waiting = finish;
      });
      if (conflicted)
        return conflict(
          "terminated by other getUpdates request; make sure that only one bot instance is running",
        );
    }
    return [200, { ok: true, result: ready() }];
  }

  function control(url: URL, method: string, body: string, res: ServerResponse) {
    const path = url.pathname.slice("/_control/".length);
    if (path === "reset" && method === "POST") {
      calls = [];
      messages = [];
      scripts = [];
      lastIds.clear();
      files.clear();
      webhooks.clear();
      usernames.clear();
      for (const state of polling.values()) state.waiting?.(false);
      polling.clear();
      return json(res, 200, { ok: true });
    }
    if (path === "script" && method === "POST") {
      const script = JSON.parse(body) as Partial<Script> & { method: string };
      scripts.push({
        times: 1,
        ...script,
        ...(script.chatId !== undefined ? { chatId: String(script.chatId) } : {}),
      });
      return json(res, 200, { ok: true });
    }
    if (path === "file" && method === "POST") {
      const file = JSON.parse(body) as {
        fileId: string;
        content?: string;
        /** Binary content (a photo, a voice note) instead of `content`. */
        contentBase64?: string;
        filePath?: string;
        size?: number;
      };
      const content =
        file.contentBase64 !== undefined
          ? Buffer.from(file.contentBase64, "base64")
          : Buffer.from(file.content ?? "");
      files.set(file.fileId, {
        content,
        filePath: file.filePath ?? `documents/${file.fileId}.txt`,
        size: file.size ?? content.byteLength,
      });
      return json(res, 200, { ok: true });
    }
    if (path === "identity" && method === "POST") {
      const identity = JSON.parse(body) as { botId: string; username: string };
      usernames.set(String(identity.botId), identity.username);
      return json(res, 200, { ok: true });
    }
    if (path === "updates" && method === "POST") {
      const queued = JSON.parse(body) as { botId: string; updates: Array<{ update_id: number }> };
      const state = pollState(String(queued.botId));
      state.pending.push(
        ...queued.updates.filter((update) => update.update_id >= state.confirmedOffset),
      );
      // A waiting long poll answers now, as Telegram's does when an update arrives.
      const waiting = state.waiting;
      state.waiting = undefined;
      waiting?.(false);
      return json(res, 200, { ok: true });
    }
    if (path === "updates") {
      const state = pollState(url.searchParams.get("bot_id") ?? "");
      return json(res, 200, { pending: state.pending, confirmedOffset: state.confirmedOffset });
    }
    const chat = url.searchParams.get("chat_id");
    if (path === "calls") {
      const only = url.searchParams.get("method");
      return json(
        res,
        200,
        calls.filter(
          (c) => (!only || c.method === only) && (!chat || String(c.args.chat_id) === chat),
        ),
      );
    }
    if (path === "messages")
      return json(
        res,
        200,
        messages.filter((m) => !chat || m.chat_id === chat),
      );
    if (path === "webhook")
      return json(res, 200, webhooks.get(url.searchParams.get("bot_id") ?? "") ?? null);
    return json(res, 404, { error: "unknown control endpoint" });
  }

  return listenOnLoopback(server);
}

function validToken(token: string): boolean {
  return /^\d{1,20}:[\w-]{1,100}$/.test(token) && !token.endsWith("invalid");
}

/** A multipart upload's fields (nested values as JSON, like a form) and its files by field name. */
function uploadArgs(upload: {
  fields: Record<string, string>;
  files: UploadedFile[];
}): Record<string, unknown> {
  const args: Record<string, unknown> = parseArgs(
    new URLSearchParams(upload.fields).toString(),
    undefined,
  );
  for (const file of upload.files)
    args[file.field] = {
      name: file.name,
      type: file.type,
      size: file.bytes.byteLength,
      sha256: createHash("sha256").update(file.bytes).digest("hex"),
    };
  return args;
}

function parseArgs(body: string, contentType: string | undefined): Record<string, unknown> {
  if (!body) return {};
  if ((contentType ?? "").includes("application/json"))
    return JSON.parse(body) as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    // Form-encoded calls carry nested values (reply_parameters, allowed_updates) as JSON strings.
    try {
      args[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
    } catch {
      args[key] = value;
    }
  }
  return args;
}
