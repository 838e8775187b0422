/** What the fake Slack keeps: scripted failures, messages, calls, files it serves. */

export interface Script {
  method: string;
  channel?: string;
  times: number;
  status?: number;
  retryAfter?: number;
  error?: string;
  dropConnection?: boolean;
  token?: string;
  /** Hold the call this long first (then fail as scripted, or apply it and answer normally). */
  delayMs?: number;
}

export interface StoredMessage {
  channel: string;
  ts: string;
  text: string;
  thread_ts?: string;
  user: string;
  bot_id: string;
  metadata?: unknown;
  streaming?: boolean;
  deleted?: boolean;
  blocks?: unknown;
  /** Files shared by files.completeUploadExternal (bytes kept as size and SHA-256). */
  files?: Array<{ id: string; name: string; title: string; size: number; sha256: string }>;
}

export interface RecordedCall {
  method: string;
  args: Record<string, unknown>;
  token: string;
  at: number;
}

export const DEFAULT_IDENTITY = { user_id: "UBOTTEST", bot_id: "BBOTTEST", team_id: "TTEST" };

export type Identity = typeof DEFAULT_IDENTITY;

/**
 * What `/_control/file` serves at a path; `bytes` / `contentLength` are streamed
 * (scripts/simulate/fakes/stream-bytes.ts).
 */
export interface ServedFile {
  content: string;
  /** Binary content (an image, a voice note), served instead of `content`. */
  contentBase64?: string;
  contentType: string;
  /** Answer 302 to this URL instead (Slack's file links redirect between its hosts). */
  redirectTo?: string;
  /** Serve this many bytes (`content` repeated), written as the client reads them. */
  bytes?: number;
  /** The Content-Length header to send with `bytes` (may lie); none (chunked) when unset. */
  contentLength?: number;
}
