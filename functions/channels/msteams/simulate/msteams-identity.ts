import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import { newSigningKey } from "../../../../scripts/simulate/fakes/signing-keys.ts";
import { FAKE_MSTEAMS_APP } from "./msteams-records.ts";
import type { MsTeamsFakeState } from "./msteams-state.ts";

/**
 * The fake's identity side: the OpenID metadata and signing keys of the Bot Framework and Entra,
 * the client-credentials token endpoint, and the tokens a test signs as Teams would send them.
 * `identityRoutes` answers UNHANDLED when the path is none of these.
 */

export const UNHANDLED = Symbol("not an identity route");

export function identityRoutes(
  state: MsTeamsFakeState,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  raw: string,
): typeof UNHANDLED | undefined {
  if (req.method === "GET" && path === "/botframework/v1/.well-known/openidconfiguration")
    return void json(res, 200, {
      issuer: "https://api.botframework.com",
      authorization_endpoint: "https://invalid.botframework.com",
      jwks_uri: `${state.baseUrl}/botframework/v1/keys`,
      id_token_signing_alg_values_supported: ["RS256"],
      token_endpoint_auth_methods_supported: ["private_key_jwt"],
    });
  if (req.method === "GET" && path === "/botframework/v1/keys")
    return void json(res, 200, { keys: [{ ...state.botKey.jwk, endorsements: ["msteams"] }] });
  const entraMeta = /^\/login\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(path);
  if (req.method === "GET" && entraMeta)
    return void json(res, 200, {
      issuer: `https://login.microsoftonline.com/${entraMeta[1]}/v2.0`,
      jwks_uri: `${state.baseUrl}/login/${entraMeta[1]}/discovery/v2.0/keys`,
    });
  if (req.method === "GET" && /^\/login\/[^/]+\/discovery\/v2\.0\/keys$/.test(path))
    return void json(res, 200, { keys: [state.entraKey.jwk] });

  const tokenPath = /^\/login\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path);
  if (req.method === "POST" && tokenPath) {
    const script = state.scripted("token");
    if (script?.status) return void json(res, script.status, { error: "temporarily_unavailable" });
    const form = new URLSearchParams(raw);
    if (form.get("grant_type") !== "client_credentials")
      return void json(res, 400, { error: "unsupported_grant_type" });
    if (form.get("scope") !== "https://api.botframework.com/.default")
      return void json(res, 400, { error: "invalid_scope" });
    if (
      form.get("client_id") !== FAKE_MSTEAMS_APP.appId ||
      form.get("client_secret") !== FAKE_MSTEAMS_APP.appPassword
    )
      return void json(res, 401, { error: "invalid_client" });
    if (tokenPath[1] !== FAKE_MSTEAMS_APP.tenantId && tokenPath[1] !== "botframework.com")
      return void json(res, 400, {
        error: "invalid_request",
        error_description: "AADSTS90002: Tenant not found",
      });
    const token = `eyJ.fake-${randomUUID()}`;
    state.tokens.add(token);
    return void json(res, 200, {
      token_type: "Bearer",
      expires_in: 3599,
      ext_expires_in: 3599,
      access_token: token,
    });
  }

  return UNHANDLED;
}

export async function signActivityToken(
  state: MsTeamsFakeState,
  body: Record<string, unknown>,
): Promise<string> {
  const key = body.forged
    ? await newSigningKey("bf")
    : body.entraTenant
      ? state.entraKey
      : state.botKey;
  const now = Math.floor(Date.now() / 1000);
  // As Microsoft's tokens carry it: `serviceurl`, lower case (Entra tokens too, unless noServiceUrl).
  const claims: Record<string, unknown> = {
    ...(body.entraTenant ? { tid: body.tid ?? body.entraTenant } : {}),
    ...(body.noServiceUrl ? {} : { serviceurl: body.serviceUrl ?? state.baseUrl }),
  };
  const issuer =
    body.issuer ??
    (body.entraTenant
      ? `https://login.microsoftonline.com/${String(body.entraTenant)}/v2.0`
      : "https://api.botframework.com");
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: String(body.kid ?? key.kid), typ: "JWT" })
    .setIssuer(String(issuer))
    .setAudience(String(body.audience ?? FAKE_MSTEAMS_APP.appId))
    .setIssuedAt(now - 5)
    .setNotBefore(now - 5)
    .setExpirationTime(now + Number(body.expiresInSeconds ?? 3600))
    .sign(key.privateKey);
}
