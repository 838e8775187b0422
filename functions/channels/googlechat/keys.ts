import { createLocalJWKSet, type JSONWebKeySet } from "jose";
import { z } from "zod";

/**
 * Google's signing keys, fetched from a JWK set URL and kept per isolate: for `maxAge` (the answer's
 * Cache-Control, at most an hour, 10 minutes when it says nothing), and fetched again at once when a
 * token names a key id the set lacks (Google rotates keys), at most once every 5 s per URL so forged
 * key ids cannot make the Worker hammer Google. Only resolved key sets are shared between requests,
 * never a pending fetch (workerd refuses I/O begun by another request).
 */

const DEFAULT_MAX_AGE_MS = 10 * 60_000;
const MAX_AGE_CAP_MS = 60 * 60_000;
const UNKNOWN_KID_REFETCH_MS = 5_000;

const jwksSchema = z.object({ keys: z.array(z.object({ kty: z.string(), kid: z.string().optional() }).loose()).min(1) });

interface CachedSet {
  jwks: JSONWebKeySet;
  fetchedAt: number;
  maxAgeMs: number;
}

const cache = new Map<string, CachedSet>();

export async function googleKeySet(url: string, kid: string | undefined, now = Date.now()): Promise<ReturnType<typeof createLocalJWKSet>> {
  let entry = cache.get(url);
  const stale = !entry || now - entry.fetchedAt >= entry.maxAgeMs;
  const unknownKid = entry && kid !== undefined && !entry.jwks.keys.some((key) => key.kid === kid) && now - entry.fetchedAt >= UNKNOWN_KID_REFETCH_MS;
  if (stale || unknownKid) {
    try {
      entry = await fetchKeySet(url, now);
      cache.set(url, entry);
    } catch (error) {
      // A stale set still verifies tokens signed with keys it holds; with none at all, fail closed.
      if (!entry) throw error;
    }
  }
  return createLocalJWKSet(entry!.jwks);
}

async function fetchKeySet(url: string, now: number): Promise<CachedSet> {
  const response = await fetch(url, { redirect: "manual", headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`key set ${url}: HTTP ${response.status}`);
  const parsed = jwksSchema.safeParse(await response.json());
  if (!parsed.success) throw new Error(`key set ${url}: not a JWK set`);
  return { jwks: parsed.data as JSONWebKeySet, fetchedAt: now, maxAgeMs: maxAge(response.headers.get("cache-control")) };
}

function maxAge(cacheControl: string | null): number {
  const seconds = Number(/max-age=(\d+)/.exec(cacheControl ?? "")?.[1]);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, MAX_AGE_CAP_MS) : DEFAULT_MAX_AGE_MS;
}

/** For tests: forget every cached key set. */
export function forgetGoogleKeySets(): void {
  cache.clear();
}
