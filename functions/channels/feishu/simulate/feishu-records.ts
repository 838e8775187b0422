/** What the fake Feishu keeps: scripted failures, cards, uploads, sent messages, calls. */

/** A failure a test scripted for the next calls of one API (and optionally one chat). */
export interface Script {
  api: string;
  chat?: string;
  times: number;
  status?: number;
  code?: number;
  dropConnection?: boolean;
}

/** A CardKit card entity: its one markdown element's text, streaming flag and last sequence. */
export interface Card {
  id: string;
  elementId: string;
  text: string;
  streaming: boolean;
  sequence: number;
  uuids: Set<string>;
  chat?: string;
}

/** A file or image uploaded through im/v1/files or im/v1/images. */
export interface Upload {
  name: string;
  type: string;
  size: number;
  sha256: string;
}

/** A message the bot sent, as the messages listing shows it. */
export interface Delivered {
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
  file?: Upload;
}

/** One API call as the fake received it and what it answered. */
export interface Call {
  api: string;
  chat?: string;
  body: unknown;
  token: string;
  status: number;
  code: number;
  at: number;
}
