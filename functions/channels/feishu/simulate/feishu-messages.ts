import type { IncomingMessage, ServerResponse } from "node:http";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import { cardReference, messageData, postText, str, validateContent } from "./feishu-content.ts";
import type { Delivered } from "./feishu-records.ts";
import { answer, type FeishuFakeState } from "./feishu-state.ts";

/**
 * The im/v1 message APIs of the fake Feishu: send (messages?receive_id_type=chat_id), reply,
 * reactions and resources, behind the tenant token and any scripted failure. A uuid seen within
 * the hour answers the first message again and sends nothing.
 */
export function messageApi(
  state: FeishuFakeState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  method: string,
  body: Record<string, unknown>,
) {
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
      : state.userMessages.get(decodeURIComponent((reply ?? reactions ?? resource)![1]!));
  const auth = String(req.headers.authorization ?? "");
  const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
  const call = state.record(api, chat, body, token ? `…${token.slice(-4)}` : "");
  const expiresAt = state.issued.get(token);
  if (expiresAt === undefined || expiresAt < Date.now())
    return answer(
      res,
      call,
      400,
      99991663,
      {},
      "Invalid access token for authorization. Please make a request with token attached.",
    );
  const script = state.takeScript(api, chat);
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
    const bytes = state.resources.get(
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
        reaction_id: `r-${state.nextId++}`,
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
  if (cardId !== undefined && !state.cards.has(cardId))
    return answer(res, call, 400, 230099, {}, "card_id not found");
  const uuid = str(body.uuid);
  if (uuid !== undefined && uuid.length > 50)
    return answer(res, call, 400, 99992402, {}, "field validation failed: uuid");
  const seen = uuid ? state.byUuid.get(uuid) : undefined;
  if (seen && Date.now() - seen.at < 3_600_000) {
    if (drop()) return;
    return answer(res, call, 200, 0, messageData(seen.message));
  }
  if (cardId) state.cards.get(cardId)!.chat = chat;
  const message: Delivered = {
    ...(cardId ? { card_id: cardId } : {}),
    chat_id: chat,
    text: postText(str(body.msg_type)!, str(body.content)!),
    ...(state.fileOf(str(body.msg_type)!, str(body.content)!)
      ? { file: state.fileOf(str(body.msg_type)!, str(body.content)!) }
      : {}),
    msg_type: str(body.msg_type)!,
    via: api === "reply" ? "reply" : "create",
    thread: body.reply_in_thread === true,
    ...(api === "reply" ? { reply_to: decodeURIComponent(reply![1]!) } : {}),
    message_id: `om_bot${String(state.nextId++).padStart(8, "0")}`,
    ...(uuid ? { uuid } : {}),
    at: Date.now(),
  };
  state.delivered.push(message);
  if (uuid) state.byUuid.set(uuid, { message, at: Date.now() });
  if (drop()) return;
  return answer(res, call, 200, 0, messageData(message));
}
