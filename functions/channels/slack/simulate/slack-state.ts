import type { Identity, RecordedCall, Script, ServedFile, StoredMessage } from "./slack-records.ts";

/**
 * Everything the fake Slack holds between requests: the calls it recorded, the messages it keeps
 * for conversations.history/replies, pending uploads, scripted failures, identities and the files
 * it serves. The route handlers share one instance.
 */
export class SlackFakeState {
  calls: RecordedCall[] = [];
  messages: StoredMessage[] = [];
  /** files.getUploadURLExternal's uploads by file id, until completeUploadExternal shares them. */
  readonly uploads = new Map<
    string,
    { filename: string; length: number; sha256?: string; completed?: boolean }
  >();
  fileSeq = 0;
  scripts: Script[] = [];
  readonly identities = new Map<string, Identity>();
  /** Files served at /files/… to url_private downloads (path → body). */
  readonly files = new Map<string, ServedFile>();
  /** Microseconds of wall-clock time, bumped so every ts is unique and ordered. */
  private clock = 0;

  nextTs(): string {
    this.clock = Math.max(this.clock + 1, Date.now() * 1000);
    return `${Math.floor(this.clock / 1_000_000)}.${String(this.clock % 1_000_000).padStart(6, "0")}`;
  }
}
