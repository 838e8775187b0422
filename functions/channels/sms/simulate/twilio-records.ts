import type { FetchedMedia } from "../../../../scripts/simulate/fakes/fetch-media.ts";

/** What the fake Twilio keeps: scripted failures, messages, recorded calls, media it serves. */

export interface Script {
  method: string;
  to?: string;
  times: number;
  status?: number;
  code?: number;
  retryAfter?: number;
  dropConnection?: boolean;
  delayMs?: number;
}

export interface StoredMessage {
  sid: string;
  account_sid: string;
  to: string;
  from: string | null;
  messaging_service_sid: string | null;
  body: string;
  status: string;
  direction: string;
  created: number;
  sent: number | null;
  seq: number;
  num_media: string;
  status_callback?: string;
  media_urls?: string[];
  media_fetched?: FetchedMedia[];
}

export interface RecordedCall {
  method: string;
  accountSid: string;
  args: Record<string, string | string[]>;
  auth: string;
  at: number;
}

export interface Media {
  accountSid: string;
  content: string;
  contentType: string;
  bytes?: number;
  contentLength?: number;
}

/** The API version every path starts with. */
export const API = "/2010-04-01";
