import { decodeProtectedHeader, errors, jwtVerify } from "jose";
import type { GoogleChatAccount } from "./config.ts";
import { googleKeySet } from "./keys.ts";

/**
 * The bearer token Google Chat sends with every request to a Chat app's HTTP endpoint
 * (developers.google.com/workspace/chat/verify-requests-from-chat), checked per `audienceType`:
 *
 * - `app-url`: a Google OIDC ID token (keys: `oidcJwksUrl`), issuer accounts.google.com, audience
 *   the endpoint URL exactly as configured, `email` chat@system.gserviceaccount.com and verified.
 * - `project-number`: a JWT signed by the Chat service account itself (keys: `chatJwksUrl`), issuer
 *   chat@system.gserviceaccount.com, audience the Cloud project number.
 *
 * Expiry and not-before are checked with a 30 s clock tolerance. Anything else is refused.
 */

export const CHAT_ISSUER = "chat@system.gserviceaccount.com";
const OIDC_ISSUERS = ["https://accounts.google.com", "accounts.google.com"];
const CLOCK_TOLERANCE_S = 30;

export type GoogleChatVerifyResult = { ok: true } | { ok: false; reason: string };

export async function verifyGoogleChatToken(
  authorization: string | null,
  account: GoogleChatAccount,
  now = Date.now(),
): Promise<GoogleChatVerifyResult> {
  if (!account.audienceType || !account.audience) return { ok: false, reason: "no-audience" };
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  if (!token) return { ok: false, reason: "missing bearer token" };
  let kid: string | undefined;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== "RS256")
      return { ok: false, reason: `unexpected algorithm ${String(header.alg)}` };
    kid = header.kid;
  } catch {
    return { ok: false, reason: "malformed token" };
  }
  const appUrl = account.audienceType === "app-url";
  try {
    const keys = await googleKeySet(appUrl ? account.oidcJwksUrl : account.chatJwksUrl, kid, now);
    const { payload } = await jwtVerify(token, keys, {
      algorithms: ["RS256"],
      issuer: appUrl ? OIDC_ISSUERS : CHAT_ISSUER,
      audience: account.audience,
      clockTolerance: CLOCK_TOLERANCE_S,
      currentDate: new Date(now),
      requiredClaims: ["exp"],
    });
    if (appUrl && (payload.email !== CHAT_ISSUER || payload.email_verified !== true))
      return { ok: false, reason: "token is not from the Google Chat service account" };
    return { ok: true };
  } catch (error) {
    if (error instanceof errors.JWTExpired) return { ok: false, reason: "token expired" };
    if (error instanceof errors.JWTClaimValidationFailed)
      return { ok: false, reason: `claim ${error.claim} rejected` };
    if (error instanceof errors.JWKSNoMatchingKey)
      return { ok: false, reason: "signed with an unknown key" };
    if (error instanceof errors.JWSSignatureVerificationFailed)
      return { ok: false, reason: "bad signature" };
    if (error instanceof errors.JOSEError) return { ok: false, reason: error.code };
    return {
      ok: false,
      reason: `keys unavailable: ${error instanceof Error ? error.message : String(error)}`.slice(
        0,
        200,
      ),
    };
  }
}
