import { callBotApi, isEntityParseError, isNotModified, type BotApiResult } from "./client.ts";
import type { TelegramAccount } from "./config.ts";

/**
 * The three message calls edgeclaw makes, with Telegram's quirks handled once:
 * - text goes as HTML; when Telegram cannot parse the markup ("can't parse entities") the same
 *   call is made again with the plain text, so a formatting slip never loses a reply;
 * - a group that became a supergroup answers with `migrate_to_chat_id`: the message goes there;
 * - an edit to the text a message already has ("message is not modified") counts as done.
 */

interface Bot {
  account: TelegramAccount;
  botToken: string;
  signal?: AbortSignal;
}

type Message = { message_id: number; chat?: { id: number } };

export async function sendText(
  bot: Bot,
  chatId: string,
  content: { html: string; plain: string },
  extra: Record<string, unknown>,
): Promise<BotApiResult<Message>> {
  const common = {
    chat_id: chatId,
    ...extra,
    link_preview_options: { is_disabled: !bot.account.linkPreview },
  };
  let sent = await callBotApi<Message>(
    bot.account.apiRoot,
    bot.botToken,
    "sendMessage",
    { ...common, text: content.html, parse_mode: "HTML" },
    bot.signal,
  );
  if (!sent.ok && isEntityParseError(sent)) {
    sent = await callBotApi<Message>(
      bot.account.apiRoot,
      bot.botToken,
      "sendMessage",
      { ...common, text: content.plain },
      bot.signal,
    );
  }
  if (!sent.ok && sent.kind === "refused" && sent.migrateToChatId !== undefined) {
    return sendText(bot, String(sent.migrateToChatId), content, extra);
  }
  return sent;
}

export async function editText(
  bot: Bot,
  chatId: string,
  messageId: string,
  content: { html: string; plain: string },
): Promise<BotApiResult<unknown>> {
  const common = {
    chat_id: chatId,
    message_id: Number(messageId),
    link_preview_options: { is_disabled: !bot.account.linkPreview },
  };
  let edited = await callBotApi(
    bot.account.apiRoot,
    bot.botToken,
    "editMessageText",
    { ...common, text: content.html, parse_mode: "HTML" },
    bot.signal,
  );
  if (!edited.ok && isEntityParseError(edited)) {
    edited = await callBotApi(
      bot.account.apiRoot,
      bot.botToken,
      "editMessageText",
      { ...common, text: content.plain },
      bot.signal,
    );
  }
  if (!edited.ok && isNotModified(edited)) return { ok: true, result: true };
  return edited;
}

/** Deletes one of the bot's messages; one already gone counts as deleted. */
export async function deleteMessage(
  bot: Bot,
  chatId: string,
  messageId: string,
): Promise<BotApiResult<unknown>> {
  const deleted = await callBotApi(
    bot.account.apiRoot,
    bot.botToken,
    "deleteMessage",
    { chat_id: chatId, message_id: Number(messageId) },
    bot.signal,
  );
  if (
    !deleted.ok &&
    deleted.kind === "refused" &&
    deleted.errorCode === 400 &&
    /message to delete not found/i.test(deleted.description)
  ) {
    return { ok: true, result: true };
  }
  return deleted;
}
