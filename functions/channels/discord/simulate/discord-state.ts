import type { Call, FakeMessage, Script } from "./discord-records.ts";

/** A file the fake's CDN serves at /attachments/…. */
export interface CdnFile {
  body: string;
  contentType?: string;
  redirect?: string;
  understateLength?: boolean;
}

/** A channel's message bucket, set by `/_control/ratelimit`. */
export interface MessageBucket {
  limit: number;
  resetAfter: number;
  remaining: number;
  resetAt: number;
  refused: number;
}

/**
 * Everything the fake Discord holds between requests: recorded calls, the bots' messages,
 * scripted failures, the Gateway URL it hands out, CDN files and who fetched them, and the
 * per-channel message buckets. The route handlers share one instance.
 */
export class DiscordFakeState {
  calls: Call[] = [];
  messages: FakeMessage[] = [];
  scripts: Script[] = [];
  gatewayUrl = "ws://127.0.0.1:1/";
  files = new Map<string, CdnFile>();
  downloads: Array<{ path: string; authorization: string | null }> = [];
  limits = new Map<string, MessageBucket>();
}
