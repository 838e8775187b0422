import type { FakeTelegramMessage, PollQueue, RecordedCall, Script } from "./telegram-records.ts";

/**
 * Everything the fake Telegram holds between requests: recorded calls, the bots' messages and
 * the last message id per chat, scripted failures, files getFile knows, webhooks, usernames and
 * each bot's getUpdates queue. The route handlers share one instance.
 */
export class TelegramFakeState {
  calls: RecordedCall[] = [];
  messages: FakeTelegramMessage[] = [];
  scripts: Script[] = [];
  readonly lastIds = new Map<string, number>();
  readonly files = new Map<string, { content: Buffer; filePath: string; size: number }>();
  readonly webhooks = new Map<string, Record<string, unknown>>();
  readonly usernames = new Map<string, string>();
  readonly polling = new Map<string, PollQueue>();

  /** The bot's getUpdates queue, made on first use. */
  pollQueue(botId: string): PollQueue {
    let queue = this.polling.get(botId);
    if (!queue) this.polling.set(botId, (queue = { pending: [], confirmedOffset: 0 }));
    return queue;
  }

  /** The next message id in a chat: they count up per chat, as Telegram's do. */
  nextMessageId(chatId: string): number {
    const messageId = (this.lastIds.get(chatId) ?? 0) + 1;
    this.lastIds.set(chatId, messageId);
    return messageId;
  }
}
