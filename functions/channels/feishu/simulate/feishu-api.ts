import type { IncomingMessage, ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { fakeServer, json, parseMultipart } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { CARD_PATH, cardApi } from "./feishu-cards.ts";
import { feishuControl } from "./feishu-control.ts";
import { messageApi } from "./feishu-messages.ts";
import { answer, FeishuFakeState } from "./feishu-state.ts";
import { UPLOAD_PATH, uploadApi } from "./feishu-uploads.ts";

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

export async function startFakeFeishuApi(
  options: { apps?: Record<string, string> } = {},
): Promise<FakeFeishuApi> {
  const state = new FeishuFakeState(options.apps ?? {});
  return listenOnLoopback(
    fakeServer((req, res, url, raw, bytes) => handle(state, req, res, url, raw, bytes)),
  );
}

async function handle(
  state: FeishuFakeState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  raw: string,
  bytes: Buffer,
) {
  if (url.pathname.startsWith("/_control/")) return feishuControl(state, url, raw, res);
  const method = req.method ?? "GET";
  let body: Record<string, unknown> = {};
  const upload = await parseMultipart(req.headers["content-type"], bytes);
  if (upload && method === "POST" && UPLOAD_PATH.test(url.pathname))
    return uploadApi(state, req, res, url, upload);
  if (raw && !upload) {
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return json(res, 400, { code: 9499, msg: "Bad Request" });
    }
  }

  if (url.pathname === "/open-apis/auth/v3/tenant_access_token/internal" && method === "POST")
    return issueToken(state, res, body);
  const cardPath = CARD_PATH.exec(url.pathname);
  if (cardPath) return cardApi(state, req, res, method, body, cardPath);
  const recall = /^\/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(url.pathname);
  if (recall && method === "DELETE") {
    const id = decodeURIComponent(recall[1]!);
    const call = state.record(
      "recall",
      state.delivered.find((m) => m.message_id === id)?.chat_id,
      {},
      "",
    );
    if (!state.authorized(req))
      return answer(res, call, 400, 99991663, {}, "Invalid access token for authorization.");
    const before = state.delivered.length;
    state.delivered = state.delivered.filter((m) => m.message_id !== id);
    return before === state.delivered.length
      ? answer(res, call, 400, 230011, {}, "The message was withdrawn.")
      : answer(res, call, 200, 0, {});
  }
  return messageApi(state, req, res, url, method, body);
}

/** POST tenant_access_token/internal {app_id, app_secret}: a token good for `lifetimeSeconds`. */
function issueToken(state: FeishuFakeState, res: ServerResponse, body: Record<string, unknown>) {
  const call = state.record("token", undefined, body, "");
  const script = state.takeScript("token", undefined);
  if (script) return answer(res, call, script.status ?? 500, script.code ?? 99991400, {});
  const apps = state.apps;
  if (!apps.has(String(body.app_id)) || apps.get(String(body.app_id)) !== body.app_secret)
    return answer(res, call, 400, 10014, {}, "app secret invalid");
  const token = `t-${randomBytes(12).toString("hex")}`;
  state.issued.set(token, Date.now() + state.lifetimeSeconds * 1000);
  call.status = 200;
  return json(res, 200, {
    code: 0,
    msg: "ok",
    tenant_access_token: token,
    expire: state.lifetimeSeconds,
  });
}
