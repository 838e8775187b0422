import type { IncomingMessage, ServerResponse } from "node:http";
import { fakeServer, json, parseMultipart } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { telegramControl } from "./telegram-control.ts";
import { applyMethod } from "./telegram-methods.ts";
import { getUpdates } from "./telegram-polling.ts";
import { TelegramFakeState } from "./telegram-state.ts";
import { formOrJsonArgs } from "../../../../scripts/simulate/fakes/form-args.ts";
import { uploadArgs, validToken } from "./telegram-wire.ts";

export type { FakeTelegramMessage } from "./telegram-records.ts";

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

export async function startFakeTelegramApi(): Promise<FakeTelegramApi> {
  const state = new TelegramFakeState();
  const server = fakeServer(handle);

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    body: string,
    raw: Buffer,
  ) {
    if (url.pathname.startsWith("/_control/"))
      return telegramControl(state, url, req.method ?? "GET", body, res);
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file) {
      state.calls.push({
        method: "file.download",
        args: { path: file[2] },
        token: `…${file[1]!.slice(-4)}`,
        at: Date.now(),
      });
      if (!validToken(file[1]!))
        return json(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
      const found = [...state.files.values()].find(
        (f) => f.filePath === decodeURIComponent(file[2]!),
      );
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
      ...(upload ? uploadArgs(upload) : formOrJsonArgs(body, req.headers["content-type"])),
    };
    state.calls.push({ method, args, token: `…${token.slice(-4)}`, at: Date.now() });
    if (!validToken(token))
      return json(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });

    const chatId = args.chat_id !== undefined ? String(args.chat_id) : undefined;
    const script = state.scripts.find(
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
      const [status, answer] = await getUpdates(state, token.split(":")[0]!, args);
      return json(res, status, answer);
    }
    const [status, answer] = applyMethod(state, method, args, token);
    if (script?.dropConnection) return void req.socket.destroy();
    return json(res, status, answer);
  }

  return listenOnLoopback(server);
}
