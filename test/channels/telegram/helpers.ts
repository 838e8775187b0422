import { env, SELF } from "cloudflare:test";
import { TEST_TELEGRAM } from "../../../functions/channels/telegram/test-fixtures.ts";
import { pairingForgetter } from "../wait.ts";

export { TEST_TELEGRAM };
export { script as scriptModel, newScenario } from "../../agent/model-helpers.ts";

const fakeTelegram = () => String((env as unknown as Record<string, unknown>).FAKE_TELEGRAM_URL);

export interface PostOptions {
  path?: string;
  /** The secret token header; `null` leaves it out. */
  secret?: string | null;
  headers?: Record<string, string>;
}

/** POSTs an update to the Worker the way Telegram does: JSON body, X-Telegram-Bot-Api-Secret-Token. */
export function postUpdate(body: string | object, options: PostOptions = {}): Promise<Response> {
  const secret = options.secret === undefined ? TEST_TELEGRAM.webhookSecret : options.secret;
  return SELF.fetch(`https://edgeclaw.test${options.path ?? "/telegram-webhook"}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(secret !== null ? { "x-telegram-bot-api-secret-token": secret } : {}),
      ...options.headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/**
 * Fresh ids per call. Random, not clock-based: test files run in parallel, each with its own
 * counters, and workerd's clock stands still between I/O, so two files could otherwise make the
 * same update_id (deduplicated: one of them would never be answered).
 */
function randomId(span: number): number {
  const bytes = crypto.getRandomValues(new Uint32Array(2));
  return Math.floor(((bytes[0]! * 2 ** 21 + (bytes[1]! >>> 11)) / 2 ** 53) * span);
}
/** A fresh positive id (users, private chats). */
export function uniqueUserId(): number {
  return 800_000_000 + randomId(1_000_000_000);
}
/** A fresh update_id. */
export function uniqueUpdateId(): number {
  return 1_000_000_000 + randomId(2 ** 40);
}
// A message is deduplicated by its chat and id (telegram/parse.ts), and test files share chats (the
// allowed users' DMs): each file's ids start at a random point, rising within the file as Telegram's do.
let messageCounter = 1000 + randomId(2 ** 40);
export function nextMessageId(): number {
  messageCounter += 1;
  return messageCounter;
}

export interface UserSpec {
  id: number | string;
  first_name?: string;
  username?: string;
  is_bot?: boolean;
}

const user = (spec: UserSpec) => ({
  id: Number(spec.id),
  is_bot: spec.is_bot ?? false,
  first_name: spec.first_name ?? "Ada",
  ...(spec.username ? { username: spec.username } : {}),
});

export function privateChat(userId: number | string) {
  return { id: Number(userId), type: "private", first_name: "Ada" };
}

export function groupChat(chatId: number | string, forum = false) {
  return {
    id: Number(chatId),
    type: "supergroup",
    title: "Test group",
    ...(forum ? { is_forum: true } : {}),
  };
}

export interface MessageSpec {
  updateId?: number;
  messageId?: number;
  from: UserSpec;
  chat: ReturnType<typeof privateChat> | ReturnType<typeof groupChat>;
  text?: string;
  entities?: unknown[];
  threadId?: number;
  replyTo?: { message_id: number; from: UserSpec };
  extra?: Record<string, unknown>;
  kind?: "message" | "edited_message";
}

/** A Bot API Update carrying one message (or an edit). */
export function messageUpdate(spec: MessageSpec) {
  const message = {
    message_id: spec.messageId ?? nextMessageId(),
    from: user(spec.from),
    chat: spec.chat,
    date: Math.floor(Date.now() / 1000),
    ...(spec.text !== undefined ? { text: spec.text } : {}),
    ...(spec.entities ? { entities: spec.entities } : {}),
    ...(spec.threadId !== undefined
      ? { message_thread_id: spec.threadId, is_topic_message: true }
      : {}),
    ...(spec.replyTo
      ? {
          reply_to_message: {
            message_id: spec.replyTo.message_id,
            from: user(spec.replyTo.from),
            chat: spec.chat,
            date: 0,
            text: "earlier",
          },
        }
      : {}),
    ...(spec.kind === "edited_message" ? { edit_date: Math.floor(Date.now() / 1000) } : {}),
    ...spec.extra,
  };
  return { update_id: spec.updateId ?? uniqueUpdateId(), [spec.kind ?? "message"]: message };
}

/** A button click (callback_query) on one of the bot's messages. */
export function callbackUpdate(spec: {
  updateId?: number;
  from: UserSpec;
  chat: ReturnType<typeof privateChat> | ReturnType<typeof groupChat>;
  data: string;
  messageId?: number;
}) {
  return {
    update_id: spec.updateId ?? uniqueUpdateId(),
    callback_query: {
      id: String(uniqueUpdateId()),
      from: user(spec.from),
      chat_instance: "42",
      data: spec.data,
      message: {
        message_id: spec.messageId ?? 1,
        from: { id: Number(TEST_TELEGRAM.botId), is_bot: true, first_name: "bot" },
        chat: spec.chat,
        date: 0,
        text: "Choose",
      },
    },
  };
}

/** A `mention` entity for `@name` at the start of `text`. */
export function mentionEntity(name: string, offset = 0) {
  return { type: "mention", offset, length: name.length + 1 };
}

export interface FakeTelegramCall {
  method: string;
  args: Record<string, unknown>;
  token: string;
  at: number;
}

export interface FakeTelegramMessage {
  chat_id: string;
  message_id: number;
  text: string;
  raw: string;
  parse_mode?: string;
  message_thread_id?: number;
  reply_to_message_id?: number;
  edits: number;
  deleted?: boolean;
  /** An uploaded file (sendDocument, sendPhoto, sendVoice, sendAudio); `text` is its caption. */
  file?: { method: string; name: string; type: string; size: number; sha256: string };
}

export async function telegramCalls(
  method?: string,
  chatId?: number | string,
): Promise<FakeTelegramCall[]> {
  const query = new URLSearchParams();
  if (method) query.set("method", method);
  if (chatId !== undefined) query.set("chat_id", String(chatId));
  return (await (
    await fetch(`${fakeTelegram()}/_control/calls?${query}`)
  ).json()) as FakeTelegramCall[];
}

export async function telegramMessages(chatId: number | string): Promise<FakeTelegramMessage[]> {
  return (await (
    await fetch(`${fakeTelegram()}/_control/messages?chat_id=${chatId}`)
  ).json()) as FakeTelegramMessage[];
}

export async function visibleMessages(chatId: number | string): Promise<FakeTelegramMessage[]> {
  return (await telegramMessages(chatId)).filter((m) => !m.deleted);
}

export async function scriptTelegram(script: {
  method: string;
  chatId?: number | string;
  times?: number;
  status?: number;
  retryAfter?: number;
  description?: string;
  dropConnection?: boolean;
  delayMs?: number;
}) {
  await fetch(`${fakeTelegram()}/_control/script`, {
    method: "POST",
    body: JSON.stringify({
      ...script,
      ...(script.chatId !== undefined ? { chatId: String(script.chatId) } : {}),
    }),
  });
}

export async function serveTelegramFile(file: { fileId: string; content: string; size?: number }) {
  await fetch(`${fakeTelegram()}/_control/file`, { method: "POST", body: JSON.stringify(file) });
}

export { settle, waitFor } from "../wait.ts";
export const forgetPairingWhenDone = pairingForgetter("telegram");
