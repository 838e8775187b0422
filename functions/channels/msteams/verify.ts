import { decodeJwt, decodeProtectedHeader, errors, jwtVerify } from "jose";
import type { MsTeamsAccount, MsTeamsCredentials } from "./config.ts";
import { openIdKeySet } from "./keys.ts";

/**
 * The bearer JWT the Bot Framework sends with every activity to the messaging endpoint
 * (learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-authentication):
 *
 * - Bot Framework tokens: issuer https://api.botframework.com, keys from the OpenID metadata
 *   document (`openIdMetadataUrl`), audience the bot's app id.
 * - Entra tokens for the configured tenant (SingleTenant apps): issuer
 *   https://login.microsoftonline.com/<tenant>/v2.0 or https://sts.windows.net/<tenant>/, keys from
 *   the tenant's v2.0 OpenID metadata under `loginBaseUrl`, audience the app id, and a `tid` claim
 *   (when present) naming that tenant.
 * - Both: a `serviceurl` claim equal to the activity's serviceUrl (so a token for one conversation
 *   host cannot carry a forged serviceUrl). Microsoft's prose writes `serviceUrl`, the tokens carry
 *   `serviceurl` (botbuilder's AuthenticationConstants.ServiceUrlClaim), so the claim name is matched
 *   without regard to case. botbuilder checks it for every channel token whatever its issuer
 *   (ChannelValidation.authenticateChannelTokenWithServiceUrl), so an Entra token without it is refused.
 *
 * RS256 only; expiry with Microsoft's documented 5 minute clock skew. Anything else is refused.
 */

export const BOT_FRAMEWORK_ISSUER = "https://api.botframework.com";
const CLOCK_SKEW_S = 300;

export type MsTeamsVerifyResult = { ok: true } | { ok: false; reason: string };

export async function verifyBotFrameworkToken(
  authorization: string | null,
  activityServiceUrl: string | undefined,
  account: MsTeamsAccount,
  credentials: MsTeamsCredentials,
  now = Date.now(),
): Promise<MsTeamsVerifyResult> {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  if (!token) return { ok: false, reason: "missing bearer token" };
  let kid: string | undefined;
  let issuer: string | undefined;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== "RS256")
      return { ok: false, reason: `unexpected algorithm ${String(header.alg)}` };
    kid = header.kid;
    issuer = decodeJwt(token).iss;
  } catch {
    return { ok: false, reason: "malformed token" };
  }
  const tenantIssuers = credentials.tenantId
    ? [
        `https://login.microsoftonline.com/${credentials.tenantId}/v2.0`,
        `https://sts.windows.net/${credentials.tenantId}/`,
      ]
    : [];
  const fromEntra = issuer !== undefined && tenantIssuers.includes(issuer);
  if (!fromEntra && issuer !== BOT_FRAMEWORK_ISSUER)
    return { ok: false, reason: "claim iss rejected" };
  const metadataUrl = fromEntra
    ? `${account.loginBaseUrl.replace(/\/+$/, "")}/${credentials.tenantId}/v2.0/.well-known/openid-configuration`
    : account.openIdMetadataUrl;
  try {
    const keys = await openIdKeySet(metadataUrl, kid, now);
    const { payload } = await jwtVerify(token, keys, {
      algorithms: ["RS256"],
      issuer: fromEntra ? tenantIssuers : BOT_FRAMEWORK_ISSUER,
      audience: credentials.appId,
      clockTolerance: CLOCK_SKEW_S,
      currentDate: new Date(now),
      requiredClaims: ["exp"],
    });
    if (fromEntra && payload.tid !== undefined && payload.tid !== credentials.tenantId)
      return { ok: false, reason: "claim tid rejected" };
    const claimed = serviceUrlClaim(payload);
    if (!claimed || !activityServiceUrl || normalise(claimed) !== normalise(activityServiceUrl))
      return { ok: false, reason: "serviceUrl claim does not match the activity" };
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

function serviceUrlClaim(payload: Record<string, unknown>): string | undefined {
  const key = Object.keys(payload).find((name) => name.toLowerCase() === "serviceurl");
  const value = key === undefined ? undefined : payload[key];
  return typeof value === "string" ? value : undefined;
}

function normalise(url: string): string {
  return url.replace(/\/+$/, "").toLowerCase();
}
