import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type JSONWebKeySet } from "jose";
import { describe, expect, it } from "vitest";
import {
  JwksCache,
  parseJwks,
  UNKNOWN_KID_REFETCH_MS,
  type LoadedKeySet,
} from "../../functions/channels/jwks-cache.ts";

/** A platform's key source: the keys it publishes now, how often it was asked, and whether it is down. */
function keySource(maxAgeMs: number) {
  const source = { jwks: { keys: [] } as JSONWebKeySet, loads: 0, down: false };
  const load = async (): Promise<LoadedKeySet> => {
    source.loads++;
    if (source.down) throw new Error("key source: HTTP 503");
    return { jwks: structuredClone(source.jwks), maxAgeMs };
  };
  return { source, cache: new JwksCache(load) };
}

async function signingKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
  const sign = () =>
    new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid })
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(privateKey);
  return { jwk, sign };
}

const T0 = 1_800_000_000_000;

describe("JWKS cache", () => {
  it("follows a key rotation: a token with a new kid fetches the set again and verifies", async () => {
    const { source, cache } = keySource(60 * 60_000);
    const old = await signingKey("k-old");
    const next = await signingKey("k-new");
    source.jwks = { keys: [old.jwk] };
    await jwtVerify(await old.sign(), await cache.keySet("src", "k-old", T0));
    source.jwks = { keys: [old.jwk, next.jwk] };
    // Fresh for an hour, but the set lacks k-new: fetched again (past the 5 s throttle) and verified.
    await jwtVerify(
      await next.sign(),
      await cache.keySet("src", "k-new", T0 + UNKNOWN_KID_REFETCH_MS),
    );
    expect(source.loads).toBe(2);
    // A known kid within max-age costs nothing.
    await cache.keySet("src", "k-old", T0 + 30 * 60_000);
    expect(source.loads).toBe(2);
  });

  it("fetches again for unknown kids at most once every 5 s, so forged kids cannot hammer the platform", async () => {
    const { source, cache } = keySource(60 * 60_000);
    source.jwks = { keys: [(await signingKey("k1")).jwk] };
    await cache.keySet("src", "k1", T0);
    for (let i = 0; i < 20; i++) await cache.keySet("src", `forged-${i}`, T0 + i * 200);
    expect(source.loads).toBe(1);
    await cache.keySet("src", "forged-late", T0 + UNKNOWN_KID_REFETCH_MS);
    expect(source.loads).toBe(2);
    await cache.keySet("src", "forged-again", T0 + UNKNOWN_KID_REFETCH_MS + 1000);
    expect(source.loads).toBe(2);
  });

  it("refreshes after max-age and keeps the stale set when the refresh fails; with no set at all it fails closed", async () => {
    const { source, cache } = keySource(10 * 60_000);
    const key = await signingKey("k1");
    source.jwks = { keys: [key.jwk] };
    await cache.keySet("src", "k1", T0);
    source.down = true;
    const stale = await cache.keySet("src", "k1", T0 + 10 * 60_000);
    expect(source.loads).toBe(2);
    await jwtVerify(await key.sign(), stale);
    // Each source is cached on its own: one never loaded has nothing to fall back on.
    await expect(cache.keySet("other", "k1", T0)).rejects.toThrow(/HTTP 503/);
    source.down = false;
    await cache.keySet("src", "k1", T0 + 10 * 60_000 + 1);
    expect(source.loads).toBe(4);
    cache.forget();
    await cache.keySet("src", "k1", T0 + 10 * 60_000 + 2);
    expect(source.loads).toBe(5);
  });

  it("accepts a JWK set only with keys that name their type", () => {
    expect(
      parseJwks({ keys: [{ kty: "RSA", kid: "a", n: "x", e: "AQAB" }] }, "u").keys,
    ).toHaveLength(1);
    expect(() => parseJwks({ keys: [] }, "https://keys.example/")).toThrow(
      "key set https://keys.example/: not a JWK set",
    );
    expect(() => parseJwks({ keys: [{ kid: "a" }] }, "u")).toThrow(/not a JWK set/);
    expect(() => parseJwks("<html>", "u")).toThrow(/not a JWK set/);
  });
});
