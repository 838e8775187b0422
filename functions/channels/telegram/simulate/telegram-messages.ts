import { parseTelegramHtml } from "./telegram-html.ts";
import { type FakeTelegramMessage, MAX_TEXT, type Reply } from "./telegram-records.ts";
import type { TelegramFakeState } from "./telegram-state.ts";

/**
 * The message methods of the fake Telegram: sendMessage, the uploads (sendDocument, sendPhoto,
 * sendVoice, sendAudio), editMessageText and deleteMessage, with Telegram's checks (HTML markup,
 * 4096 visible characters, the General topic, an edit to the same text, unknown messages).
 * Undefined for any other method.
 */
export function messageMethod(
  state: TelegramFakeState,
  method: string,
  args: Record<string, unknown>,
  botId: string,
): Reply | undefined {
  const bad = (description: string): Reply => [
    400,
    { ok: false, error_code: 400, description: `Bad Request: ${description}` },
  ];
  const ok = (result: unknown): Reply => [200, { ok: true, result }];
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
    state.messages.find(
      (m) =>
        m.chat_id === chatId &&
        m.message_id === Number(args.message_id) &&
        m.bot_id === botId &&
        !m.deleted,
    );
  switch (method) {
    case "sendMessage": {
      if (!chatId) return bad("chat_id is empty");
      const thread =
        args.message_thread_id !== undefined ? Number(args.message_thread_id) : undefined;
      if (thread === 1) return bad("message thread not found");
      const text = rendered();
      if ("error" in text) return [400, { ok: false, error_code: 400, description: text.error }];
      const messageId = state.nextMessageId(chatId);
      const reply = args.reply_parameters as { message_id?: number } | undefined;
      state.messages.push({
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
      const messageId = state.nextMessageId(chatId);
      state.messages.push({
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
    default:
      return undefined;
  }
}
