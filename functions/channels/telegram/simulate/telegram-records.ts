/** What the fake Telegram keeps: scripted failures, the bots' messages, recorded calls. */

export interface Script {
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

export interface RecordedCall {
  method: string;
  args: Record<string, unknown>;
  token: string;
  at: number;
}

/** A long-poll queue of one bot: updates not yet confirmed, and the getUpdates call waiting. */
export interface PollQueue {
  pending: Array<{ update_id: number }>;
  confirmedOffset: number;
  waiting?: (conflict: boolean) => void;
}

/** A method's answer: the HTTP status and Telegram's JSON body. */
export type Reply = [number, Record<string, unknown>];

/** Telegram's limit on a message's visible characters. */
export const MAX_TEXT = 4096;
