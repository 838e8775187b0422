import { getJson, JwksCache, parseJwks, type KeySet } from "../jwks-cache.ts";

/**
 * Google's signing keys, fetched from a JWK set URL (the config's `oidcJwksUrl` / `chatJwksUrl`) and
 * kept per isolate by the shared key-set cache (jwks-cache.ts: stale-on-failure, unknown key ids
 * refetched at most every 5 s). Fresh for the answer's Cache-Control max-age, at most an hour,
 * 10 minutes when it says nothing.
 */

const DEFAULT_MAX_AGE_MS = 10 * 60_000;
const MAX_AGE_CAP_MS = 60 * 60_000;

const cache = new JwksCache(async (url) => {
  const response = await getJson(url);
  return {
    jwks: parseJwks(await response.json(), url),
    maxAgeMs: maxAge(response.headers.get("cache-control")),
  };
});

export function googleKeySet(
  url: string,
  kid: string | undefined,
  now = Date.now(),
): Promise<KeySet> {
  return cache.keySet(url, kid, now);
}

function maxAge(cacheControl: string | null): number {
  const seconds = Number(/max-age=(\d+)/.exec(cacheControl ?? "")?.[1]);
  return Number.isFinite(seconds) && seconds > 0
    ? Math.min(seconds * 1000, MAX_AGE_CAP_MS)
    : DEFAULT_MAX_AGE_MS;
}

/** For tests: forget every cached key set. */
export function forgetGoogleKeySets(): void {
  cache.forget();
}
