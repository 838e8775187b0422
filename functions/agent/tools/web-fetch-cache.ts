/** The web tools' result cache (web_fetch, web_search): split from web-fetch.ts, which keeps the fetch and extraction. */
import type { EdgeclawConfig } from "../../config/schema.ts";

type FetchConfig = EdgeclawConfig["tools"]["web"]["fetch"];

/**
 * The fetch cache lives in the Workers Cache API (per data centre, best effort). The key covers
 * everything that changes the bytes sent or the result shape: URL, mode, char limit and a digest
 * of the configured headers (so a header change partitions the cache without the values appearing
 * in the key).
 */
export async function webFetchCacheKey(
  fetchConfig: FetchConfig,
  url: string,
  extractMode: string,
  maxChars: number,
): Promise<Request> {
  const material = JSON.stringify([
    url,
    extractMode,
    maxChars,
    fetchConfig.userAgent ?? "",
    fetchConfig.headers ?? {},
    fetchConfig.readability,
  ]);
  return digestCacheKey("web-fetch-cache", material);
}

/**
 * A cache key for `material` in its own namespace (web-fetch-cache, web-search-cache): a digest, so
 * nothing of the material (queries, header values) appears in the key itself.
 */
export async function digestCacheKey(namespace: string, material: string): Promise<Request> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(material));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return new Request(`https://${namespace}.edgeclaw.invalid/${hex}`);
}

function fetchCache(): Cache | undefined {
  return typeof caches === "undefined" ? undefined : caches.default;
}

export async function cacheGet<T>(key: Request): Promise<T | undefined> {
  try {
    const hit = await fetchCache()?.match(key);
    return hit ? ((await hit.json()) as T) : undefined;
  } catch {
    return undefined; // A cache failure costs a refetch, never the call.
  }
}

export async function cachePut(key: Request, result: unknown, ttlMinutes: number): Promise<void> {
  try {
    const maxAge = Math.max(1, Math.round(ttlMinutes * 60));
    await fetchCache()?.put(
      key,
      new Response(JSON.stringify(result), {
        headers: { "content-type": "application/json", "cache-control": `max-age=${maxAge}` },
      }),
    );
  } catch {
    // Best effort, as above.
  }
}
