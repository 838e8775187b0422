import { createLocalJWKSet, type JSONWebKeySet } from "jose";
import { z } from "zod";

/**
 * Signing keys named by an OpenID metadata document (Bot Framework's
 * login.botframework.com/v1/.well-known/openidconfiguration, or the Entra tenant's
 * …/<tenant>/v2.0/.well-known/openid-configuration): the document's `jwks_uri` is fetched and the
 * key set kept in a module-level cache, i.e. per isolate (a Worker isolate serves many requests, so
 * this costs one fetch per isolate per day, not per request).
 *
 * - Fresh for 24 h (Microsoft recommends refreshing at least daily); after that the stale set is
 *   still used when a refresh fails (stale-while-revalidate, fail closed only with no set at all).
 * - A token naming a `kid` the set lacks refetches at once (Microsoft rotates keys), at most once
 *   every 5 s per document so forged kids cannot make the Worker hammer Microsoft.
 * Only resolved sets are shared between requests, never a pending fetch (workerd refuses I/O begun
 * by another request).
 */

const FRESH_MS = 24 * 60 * 60_000;
const UNKNOWN_KID_REFETCH_MS = 5_000;

const metadataSchema = z.object({ jwks_uri: z.url() }).loose();
const jwksSchema = z.object({ keys: z.array(z.object({ kty: z.string(), kid: z.string().optional() }).loose()).min(1) });

interface CachedSet {
  jwks: JSONWebKeySet;
  fetchedAt: number;
}

const cache = new Map<string, CachedSet>();

export async function openIdKeySet(metadataUrl: string, kid: string | undefined, now = Date.now()): Promise<ReturnType<typeof createLocalJWKSet>> {
  let entry = cache.get(metadataUrl);
  const stale = !entry || now - entry.fetchedAt >= FRESH_MS;
  const unknownKid = entry && kid !== undefined && !entry.jwks.keys.some((key) => key.kid === kid) && now - entry.fetchedAt >= UNKNOWN_KID_REFETCH_MS;
  if (stale || unknownKid) {
    try {
      entry = await fetchKeySet(metadataUrl, now);
      cache.set(metadataUrl, entry);
    } catch (error) {
      if (!entry) throw error;
    }
  }
  return createLocalJWKSet(entry!.jwks);
}

async function fetchKeySet(metadataUrl: string, now: number): Promise<CachedSet> {
  const metadata = metadataSchema.safeParse(await getJson(metadataUrl));
  if (!metadata.success) throw new Error(`OpenID metadata ${metadataUrl}: no jwks_uri`);
  const parsed = jwksSchema.safeParse(await getJson(metadata.data.jwks_uri));
  if (!parsed.success) throw new Error(`key set ${metadata.data.jwks_uri}: not a JWK set`);
  return { jwks: parsed.data as JSONWebKeySet, fetchedAt: now };
}

async function getJson(url: string): Promise<unknown> {
  const response = await fetch(url, { redirect: "manual", headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}
