import type { SigningKey } from "../../../../scripts/simulate/fakes/signing-keys.ts";
import type { FakeActivityRecord, Script, SentFile, Stream } from "./msteams-records.ts";

/**
 * Everything the fake Microsoft holds between requests: the Bot Framework and Entra signing keys,
 * posted activities, native streams, scripted failures, files and who fetched them, and the
 * access tokens it issued. The route handlers share one instance.
 */
export class MsTeamsFakeState {
  activities: FakeActivityRecord[] = [];
  scripts: Script[] = [];
  files = new Map<string, SentFile>();
  downloads: Array<{ path: string; host: string; authorization: boolean }> = [];
  /** Native streams by id. */
  streams = new Map<string, Stream>();
  tokens = new Set<string>();
  baseUrl = "";

  botKey: SigningKey;
  readonly entraKey: SigningKey;

  constructor(botKey: SigningKey, entraKey: SigningKey) {
    this.botKey = botKey;
    this.entraKey = entraKey;
  }

  /** The next scripted answer for `api`; a script naming a conversation applies only there (tests run in parallel). */
  scripted(api: string, conversation?: string): Script | undefined {
    const script = this.scripts.find(
      (s) =>
        s.api === api &&
        s.times > 0 &&
        (!s.conversation || s.conversation === conversation?.split(";messageid=")[0]),
    );
    if (script) script.times -= 1;
    return script;
  }
}
