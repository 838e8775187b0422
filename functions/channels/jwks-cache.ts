import { createLocalJWKSet, type JSONWebKeySet } from "jose";
import * as z from "zod";

/**
 * A platform's token-signing keys (Google Chat, the Bot Framework), kept per isolate in a
 * module-level cache: a Worker isolate serves many requests, so a key set costs one fetch per
 * isolate per `maxAgeMs`, not one per request.
 *
 * - Fresh for the `maxAgeMs` the loader reports; once stale, fetched again — and when that fails,
 *   the stale set is still used (it verifies tokens signed with keys it holds; fail closed only with
 *   no set at all).
 * - A token naming a key id the set lacks fetches again at once (platforms rotate keys), at most
 *   once every 5 s per source, so forged key ids cannot make the Worker hammer the platform.
 * - Only resolved sets are shared between requests, never a pending fetch (workerd refuses I/O
 *   begun by another request).
 */

/** The shortest time between two fetches a token's unknown key id may cause. */
export const UNKNOWN_KID_REFETCH_MS = 5_000;

/** What a loader returns: the keys, and how long they are fresh. */
export interface LoadedKeySet {
  jwks: JSONWebKeySet;
  maxAgeMs: number;
}

export type KeySet = ReturnType<typeof createLocalJWKSet>;

interface CachedSet extends LoadedKeySet {
  fetchedAt: number;
}

export class JwksCache {
  readonly #sets = new Map<string, CachedSet>();
  readonly #load: (source: string) => Promise<LoadedKeySet>;

  /** `load` fetches the key set that `source` (a URL the channel's config names) stands for. */
  constructor(load: (source: string) => Promise<LoadedKeySet>) {
    this.#load = load;
  }

  /** The key set of `source` to verify a token whose header names `kid`. Throws only when no set was ever loaded. */
  async keySet(source: string, kid: string | undefined, now = Date.now()): Promise<KeySet> {
    let entry = this.#sets.get(source);
    const stale = !entry || now - entry.fetchedAt >= entry.maxAgeMs;
    const unknownKid =
      entry &&
      kid !== undefined &&
      !entry.jwks.keys.some((key) => key.kid === kid) &&
      now - entry.fetchedAt >= UNKNOWN_KID_REFETCH_MS;
    if (stale || unknownKid) {
      try {
        entry = { ...(await this.#load(source)), fetchedAt: now };
        this.#sets.set(source, entry);
      } catch (error) {
        if (!entry) throw error;
      }
    }
    return createLocalJWKSet(entry!.jwks);
  }

  /** For tests: forget every cached key set. */
  forget(): void {
    this.#sets.clear();
  }
}

const jwksSchema = z.object({
  keys: z.array(z.object({ kty: z.string(), kid: z.string().optional() }).loose()).min(1),
});

/** A JWK set from outside (at least one key, each with `kty`), or an error naming where it came from. */
export function parseJwks(body: unknown, url: string): JSONWebKeySet {
  const parsed = jwksSchema.safeParse(body);
  if (!parsed.success) throw new Error(`key set ${url}: not a JWK set`);
  return parsed.data as JSONWebKeySet;
}

/** A GET for JSON that follows no redirect (a key source that moves is an error, not a hop to elsewhere). */
export async function getJson(url: string): Promise<Response> {
  const response = await fetch(url, {
    redirect: "manual",
    headers: { accept: "application/json" },
  });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response;
}
