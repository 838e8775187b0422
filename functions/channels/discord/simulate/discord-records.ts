/** What the fake Discord keeps: scripted failures, messages, attachments, calls; and its ids. */

export interface Script {
  route: string;
  channelId?: string;
  times: number;
  status?: number;
  retryAfter?: number;
  global?: boolean;
  dropConnection?: boolean;
  /** Drop the connection before the message is created (the send never reached Discord). */
  dropBeforeCreate?: boolean;
}

export interface FakeMessage {
  id: string;
  channel_id: string;
  author: { id: string; username: string; bot: true };
  content: string;
  nonce?: string;
  flags?: number;
  message_reference?: { message_id: string };
  interaction?: string;
  attachments?: FakeAttachment[];
  edits: number;
  deleted?: boolean;
  at: number;
}

export interface FakeAttachment {
  id: string;
  filename: string;
  size: number;
  content_type: string;
  sha256: string;
}

/** One REST call as the fake received it (token cut to its last 4). */
export interface Call {
  route: string;
  method: string;
  path: string;
  channelId?: string;
  body: unknown;
  token?: string;
  at: number;
}

let snowflakeCounter = 0n;

/** An increasing snowflake for a message created at `at` (ms), as Discord's ids say when. */
export function nextSnowflake(at = Date.now()): string {
  snowflakeCounter = (snowflakeCounter + 1n) % 4096n;
  return String(((BigInt(Math.floor(at)) - 1_420_070_400_000n) << 22n) | snowflakeCounter);
}

/** The bot's user id is its token's first segment (base64), as in Discord. */
export function botIdOfToken(token: string): string | undefined {
  try {
    const id = Buffer.from(token.split(".")[0] ?? "", "base64").toString("utf8");
    return /^\d+$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}
