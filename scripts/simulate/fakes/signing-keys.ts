import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from "jose";

/**
 * An RS256 key a fake identity provider signs tokens with (Google's OIDC / Chat keys, the Bot
 * Framework's and Entra's): the private half signs, the public JWK is what the fake publishes in its
 * key set. `prefix` starts the kid so a test can tell whose key signed a token.
 */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function newSigningKey(prefix: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = `${prefix}-${randomUUID().slice(0, 8)}`;
  return {
    kid,
    privateKey,
    jwk: { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" },
  };
}
