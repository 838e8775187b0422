import type { Media, RecordedCall, Script, StoredMessage } from "./twilio-records.ts";

/**
 * Everything the fake Twilio holds between requests: the accounts it knows (sid → auth token),
 * recorded calls, created messages, scripted failures and the media it serves. The route
 * handlers share one instance.
 */
export class TwilioFakeState {
  readonly accounts: Map<string, string>;
  calls: RecordedCall[] = [];
  messages: StoredMessage[] = [];
  scripts: Script[] = [];
  media = new Map<string, Media>();
  /** Orders messages created in the same millisecond. */
  seq = 0;

  constructor(accounts: Record<string, string>) {
    this.accounts = new Map(Object.entries(accounts));
  }
}
