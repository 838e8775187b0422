/** What the fake Microsoft keeps for Teams bots: activities, streams, scripted failures, files. */

export interface FakeActivityRecord {
  id: string;
  conversation: string;
  replyToId?: string;
  type: string;
  text?: string;
  at: number;
  streamId?: string;
  streamType?: string;
  streamSequence?: number;
  /** PUT edits applied to a posted message. */
  updates?: number;
  deleted?: boolean;
}

/** A failure a test scripted for the next calls of one API (and optionally one conversation). */
export interface Script {
  api: string;
  times: number;
  status?: number;
  retryAfter?: number;
  drop?: boolean;
  conversation?: string;
}

/** A native stream (personal chats only): the sequence seen, the text shown, whether it ended. */
export interface Stream {
  conversation: string;
  sequence: number;
  text: string;
  ended: boolean;
}

/** A file users "sent": `auth` needs a bot token (Bot Connector attachments), `redirect` answers 302. */
export interface SentFile {
  content: string;
  auth: boolean;
  redirect?: string;
}

/** The test bot's app registration. */
export const FAKE_MSTEAMS_APP = {
  appId: "00000000-aaaa-4bbb-8ccc-000000000001",
  appPassword: "test-teams-secret",
  tenantId: "11111111-2222-4333-8444-555555555555",
};
