import * as z from "zod";
import { getJson, JwksCache, parseJwks, type KeySet } from "../jwks-cache.ts";

/**
 * Signing keys named by an OpenID metadata document (Bot Framework's
 * login.botframework.com/v1/.well-known/openidconfiguration, or the Entra tenant's
 * …/<tenant>/v2.0/.well-known/openid-configuration): the document's `jwks_uri` is fetched and the
 * key set kept per isolate by the shared key-set cache (jwks-cache.ts: stale-on-failure, unknown key
 * ids refetched at most every 5 s). Fresh for 24 h: Microsoft recommends refreshing at least daily.
 */

const FRESH_MS = 24 * 60 * 60_000;

const metadataSchema = z.object({ jwks_uri: z.url() }).loose();

const cache = new JwksCache(async (metadataUrl) => {
  const metadata = metadataSchema.safeParse(await (await getJson(metadataUrl)).json());
  if (!metadata.success) throw new Error(`OpenID metadata ${metadataUrl}: no jwks_uri`);
  const jwksUrl = metadata.data.jwks_uri;
  return { jwks: parseJwks(await (await getJson(jwksUrl)).json(), jwksUrl), maxAgeMs: FRESH_MS };
});

export function openIdKeySet(
  metadataUrl: string,
  kid: string | undefined,
  now = Date.now(),
): Promise<KeySet> {
  return cache.keySet(metadataUrl, kid, now);
}
