/**
 * Where the bytes of media live: never in a Durable Object's storage, and in its memory only for
 * the call that needs them (a download on its way in, a model request on its way out). A transcript
 * keeps a reference (the key), the type and the size (parts.ts).
 *
 * - Production: the R2 bucket bound as `MEDIA` (wrangler.toml `[[r2_buckets]]`).
 * - `npm run dev`: workerd has no R2 of its own outside Miniflare, so the local Worker gets a
 *   writable folder of the data dir as the service `MEDIA_DISK` (scripts/lib/workerd-config.ts):
 *   PUT writes a file, GET reads it, DELETE removes it.
 * - Tests (vitest-pool-workers): Miniflare's local R2 behind the same `MEDIA` binding.
 * Without either, media is described in words and not kept.
 */

export interface MediaStore {
  /** Stores `bytes` under `key` (the same key again replaces it: a retried triage writes once). */
  put(key: string, bytes: Uint8Array, mimeType: string): Promise<void>;
  /** The bytes under `key`, or undefined when they are gone (retention, or never stored). */
  get(key: string): Promise<Uint8Array | undefined>;
  delete(keys: string[]): Promise<void>;
  /** What backs it, for status and logs: "r2" or "disk". */
  readonly kind: "r2" | "disk";
}

interface R2Like {
  put(key: string, value: Uint8Array, options?: unknown): Promise<unknown>;
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
  delete(keys: string | string[]): Promise<void>;
}

interface FetcherLike {
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

/** The media store the deployment has, or undefined (then nothing is kept and media is described only). */
export function mediaStoreFor(env: Record<string, unknown>): MediaStore | undefined {
  const bucket = env.MEDIA as Partial<R2Like> | undefined;
  if (bucket && typeof bucket.put === "function" && typeof bucket.get === "function")
    return r2Store(bucket as R2Like);
  const disk = env.MEDIA_DISK as Partial<FetcherLike> | undefined;
  if (disk && typeof disk.fetch === "function") return diskStore(disk as FetcherLike);
  return undefined;
}

function r2Store(bucket: R2Like): MediaStore {
  return {
    kind: "r2",
    async put(key, bytes, mimeType) {
      await bucket.put(key, bytes, { httpMetadata: { contentType: mimeType } });
    },
    async get(key) {
      const object = await bucket.get(key);
      return object ? new Uint8Array(await object.arrayBuffer()) : undefined;
    },
    async delete(keys) {
      if (keys.length) await bucket.delete(keys);
    },
  };
}

function diskStore(disk: FetcherLike): MediaStore {
  const url = (key: string) =>
    `http://media-disk/${key.split("/").map(encodeURIComponent).join("/")}`;
  return {
    kind: "disk",
    async put(key, bytes) {
      const response = await disk.fetch(url(key), {
        method: "PUT",
        body: bytes as Uint8Array<ArrayBuffer>,
      });
      if (!response.ok) throw new Error(`the local media folder answered HTTP ${response.status}`);
      await response.body?.cancel();
    },
    async get(key) {
      const response = await disk.fetch(url(key));
      if (response.status === 404) return undefined;
      if (!response.ok) throw new Error(`the local media folder answered HTTP ${response.status}`);
      return new Uint8Array(await response.arrayBuffer());
    },
    async delete(keys) {
      for (const key of keys) {
        const response = await disk.fetch(url(key), { method: "DELETE" });
        await response.body?.cancel();
      }
    },
  };
}

/**
 * The key of one attachment of one event: agent, then hashes of the session key and of the event's
 * dedup key (no user text in a key), then its index. Stable, so storing it again replaces it.
 */
export async function mediaKey(
  agentId: string,
  sessionKey: string,
  eventKey: string,
  index: number,
): Promise<string> {
  return `media/${safeSegment(agentId)}/${await shortHash(sessionKey)}/${await shortHash(eventKey)}-${index}`;
}

async function shortHash(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest).subarray(0, 12)]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");
}

function safeSegment(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "_";
}
