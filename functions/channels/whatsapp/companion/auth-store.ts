import { createHash } from "node:crypto";
import type { ConnectorContext } from "../../../../companion/src/connector.ts";
import type { WaAuthRuntime, WaAuthState, WaKeyStore, WaLogger } from "./wa-socket.ts";

/**
 * The linked device's Baileys auth state — `creds` and the Signal keys (pre-keys, sessions, sender
 * keys, app-state keys, LID mappings) — kept in the Worker's companion state, never on the
 * companion's disk. Signal keys change with every message and must never roll back: every write
 * carries the companion's lease epoch, so a companion that lost the lease (a rollout's old
 * instance) cannot write at all, and two companions never hold one session. A key set Baileys
 * commits goes as one batch (`putMany`: one transaction on the Worker per 1000 keys), and reads go
 * through Baileys' own cache (`makeCacheableSignalKeyStore`).
 *
 * Rows are named `auth:<generation>:<type>:<id>` (a long id hashed); creds are
 * `auth:<generation>:creds`. Logging out moves to the next generation (`auth:generation`), so a
 * relink starts from empty keys and never meets the old identity's sessions. A value past
 * CHUNK_BYTES (an app-state hash with many chats) is split over `<name>#<i>` rows written in the
 * same batch as the head that counts them.
 */

const GENERATION_KEY = "auth:generation";
const CHUNK_MARK = "\u0000chunks:";
/** Below companion.maxStateValueBytes' default (64 KiB); 4 bytes per character at most. */
const CHUNK_CHARS = 12 * 1024;
const MAX_KEY_CHARS = 190;

type State = ConnectorContext["state"];

export class WhatsAppAuthStore {
  private generation = 1;
  private credsWrite: Promise<void> = Promise.resolve();
  /** Chunk counts of values this process read or wrote, so a shrinking value removes its old chunks. */
  private readonly chunkCounts = new Map<string, number>();
  creds: WaAuthState["creds"] | undefined;

  constructor(
    private readonly state: State,
    private readonly runtime: WaAuthRuntime,
  ) {}

  /** The stored state, or fresh creds for a device that was never linked (or logged out). */
  async load(logger: WaLogger): Promise<WaAuthState> {
    this.generation = Number((await this.state.get(GENERATION_KEY)) ?? "1") || 1;
    const stored = (await this.read([this.name("creds")])).get(this.name("creds"));
    const creds = (
      stored ? JSON.parse(stored, this.runtime.BufferJSON.reviver) : this.runtime.initAuthCreds()
    ) as WaAuthState["creds"];
    this.creds = creds;
    const raw: WaKeyStore = {
      get: (type, ids) => this.getKeys(type, ids),
      set: (data) => this.setKeys(data),
    };
    return { creds, keys: this.runtime.makeCacheableSignalKeyStore(raw, logger) };
  }

  /** Writes the creds as they are now; writes are chained, so a later state never lands before an earlier one. */
  saveCreds(): Promise<void> {
    const creds = this.creds;
    if (!creds) return Promise.resolve();
    const write = this.credsWrite
      .catch(() => undefined)
      .then(() =>
        this.write([[this.name("creds"), JSON.stringify(creds, this.runtime.BufferJSON.replacer)]]),
      );
    this.credsWrite = write;
    return write;
  }

  /** Logged out: the next generation, empty; the old one's rows are never read again. */
  async forget(): Promise<void> {
    await this.credsWrite.catch(() => undefined);
    this.generation += 1;
    this.chunkCounts.clear();
    await this.state.putMany([{ key: GENERATION_KEY, value: String(this.generation) }]);
    this.creds = undefined;
  }

  private async getKeys(type: string, ids: string[]): Promise<Record<string, unknown>> {
    const names = ids.map((id) => this.name(type, id));
    const values = await this.read(names);
    const found: Record<string, unknown> = {};
    ids.forEach((id, index) => {
      const raw = values.get(names[index]!);
      if (raw === undefined) return;
      const value = JSON.parse(raw, this.runtime.BufferJSON.reviver) as unknown;
      found[id] =
        type === "app-state-sync-key" && value ? this.runtime.appStateSyncKey(value) : value;
    });
    return found;
  }

  private async setKeys(data: Record<string, Record<string, unknown | null>>): Promise<void> {
    const values: Array<[string, string | null]> = [];
    for (const [type, byId] of Object.entries(data))
      for (const [id, value] of Object.entries(byId ?? {}))
        values.push([
          this.name(type, id),
          value === null || value === undefined
            ? null
            : JSON.stringify(value, this.runtime.BufferJSON.replacer),
        ]);
    if (values.length) await this.write(values);
  }

  private name(type: string, id?: string): string {
    const name =
      id === undefined
        ? `auth:${this.generation}:${type}`
        : `auth:${this.generation}:${type}:${id}`;
    if (name.length <= MAX_KEY_CHARS) return name;
    return `auth:${this.generation}:${type}:#${createHash("sha256")
      .update(id ?? "")
      .digest("hex")}`;
  }

  /** Values by name, chunked ones joined again. */
  private async read(names: string[]): Promise<Map<string, string>> {
    const heads = await this.state.getMany(names);
    const chunked = [...heads].filter(([, value]) => value.startsWith(CHUNK_MARK));
    if (!chunked.length) return heads;
    const parts = await this.state.getMany(
      chunked.flatMap(([name, head]) =>
        Array.from({ length: Number(head.slice(CHUNK_MARK.length)) }, (_, i) => `${name}#${i}`),
      ),
    );
    for (const [name, head] of chunked) {
      const count = Number(head.slice(CHUNK_MARK.length));
      this.chunkCounts.set(name, count);
      const pieces = Array.from({ length: count }, (_, i) => parts.get(`${name}#${i}`));
      if (pieces.some((piece) => piece === undefined)) {
        heads.delete(name); // a torn value cannot be: written in one batch; treat as absent
        continue;
      }
      heads.set(name, pieces.join(""));
    }
    return heads;
  }

  /** One batch: each value whole, or its chunks and the head that counts them; stale chunks removed. */
  private async write(values: Array<[string, string | null]>): Promise<void> {
    const entries: Array<{ key: string; value: string | null }> = [];
    const counts = new Map<string, number>();
    for (const [name, value] of values) {
      const pieces =
        value !== null && value.length > CHUNK_CHARS
          ? Array.from({ length: Math.ceil(value.length / CHUNK_CHARS) }, (_, i) =>
              value.slice(i * CHUNK_CHARS, (i + 1) * CHUNK_CHARS),
            )
          : [];
      entries.push({ key: name, value: pieces.length ? `${CHUNK_MARK}${pieces.length}` : value });
      for (const [i, piece] of pieces.entries())
        entries.push({ key: `${name}#${i}`, value: piece });
      for (let i = pieces.length; i < (this.chunkCounts.get(name) ?? 0); i += 1)
        entries.push({ key: `${name}#${i}`, value: null });
      counts.set(name, pieces.length);
    }
    await this.state.putMany(entries);
    for (const [name, count] of counts) this.chunkCounts.set(name, count);
  }
}
