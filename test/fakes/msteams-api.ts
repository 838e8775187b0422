import { createServer, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { readBody } from "./read-body.ts";
import { listenOnLoopback } from "./listen.ts";

/**
 * A fake Microsoft on loopback for Teams bots, speaking the Bot Framework's wire formats:
 *   GET  /botframework/v1/.well-known/openidconfiguration   {issuer, jwks_uri}
 *   GET  /botframework/v1/keys                              the Bot Framework signing keys (JWK set)
 *   GET  /login/{tenant}/v2.0/.well-known/openid-configuration, /login/{tenant}/discovery/v2.0/keys   Entra
 *   POST /login/{tenant|botframework.com}/oauth2/v2.0/token  grant_type=client_credentials, client_id,
 *        client_secret, scope=https://api.botframework.com/.default → {token_type, expires_in, access_token}
 *        (wrong secret → 401 {error: "invalid_client"})
 *   POST /v3/conversations/{id}/activities[/{replyToId}]    {type, text, textFormat} → {id}
 * Connector calls need `Authorization: Bearer <a token the token endpoint issued>`; revoked → 401.
 *
 * Control endpoints (tests in workerd call these by plain fetch):
 *   POST /_control/sign {audience?, serviceUrl?, issuer?, expiresInSeconds?, forged?, kid?, entraTenant?} → {token}
 *   POST /_control/rotate      new Bot Framework signing key; the old one is retired
 *   POST /_control/script {api: "send"|"token", times?, status?, retryAfter?}
 *   POST /_control/revoke-tokens
 *   GET  /_control/activities?conversation=   posted activities {id, conversation, type, text, at}
 *   POST /_control/reset
 */

export interface FakeMsTeamsApi {
  url: string;
  stop(): Promise<void>;
}

export const FAKE_MSTEAMS_APP = { appId: "00000000-aaaa-4bbb-8ccc-000000000001", appPassword: "test-teams-secret", tenantId: "11111111-2222-4333-8444-555555555555" };

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function newSigningKey(prefix: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = `${prefix}-${randomUUID().slice(0, 8)}`;
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" } };
}

export async function startFakeMsTeamsApi(): Promise<FakeMsTeamsApi> {
  let botKey = await newSigningKey("bf");
  const entraKey = await newSigningKey("entra");
  let activities: Array<{ id: string; conversation: string; replyToId?: string; type: string; text?: string; at: number }> = [];
  let scripts: Array<{ api: string; times: number; status?: number; retryAfter?: number }> = [];
  let tokens = new Set<string>();
  let baseUrl = "";

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
    res.end(JSON.stringify(body));
  };
  const scripted = (api: string) => {
    const script = scripts.find((s) => s.api === api && s.times > 0);
    if (script) script.times -= 1;
    return script;
  };

  async function sign(body: Record<string, unknown>): Promise<string> {
    const key = body.forged ? await newSigningKey("bf") : body.entraTenant ? entraKey : botKey;
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = body.entraTenant ? { tid: body.entraTenant } : { serviceUrl: body.serviceUrl ?? baseUrl };
    const issuer = body.issuer ?? (body.entraTenant ? `https://login.microsoftonline.com/${String(body.entraTenant)}/v2.0` : "https://api.botframework.com");
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: String(body.kid ?? key.kid), typ: "JWT" })
      .setIssuer(String(issuer))
      .setAudience(String(body.audience ?? FAKE_MSTEAMS_APP.appId))
      .setIssuedAt(now - 5)
      .setNotBefore(now - 5)
      .setExpirationTime(now + Number(body.expiresInSeconds ?? 3600))
      .sign(key.privateKey);
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://fake");
    const raw = await readBody(req);
    const path = url.pathname;
    try {
      if (path.startsWith("/_control/")) {
        const body = raw.length ? (JSON.parse(raw) as Record<string, unknown>) : {};
        switch (path) {
          case "/_control/sign":
            return json(res, 200, { token: await sign(body) });
          case "/_control/rotate":
            botKey = await newSigningKey("bf");
            return json(res, 200, { kid: botKey.kid });
          case "/_control/script":
            scripts.push({ api: String(body.api), times: Number(body.times ?? 1), status: body.status as number | undefined, retryAfter: body.retryAfter as number | undefined });
            return json(res, 200, { ok: true });
          case "/_control/revoke-tokens":
            tokens = new Set();
            return json(res, 200, { ok: true });
          case "/_control/activities": {
            const conversation = url.searchParams.get("conversation");
            return json(res, 200, { activities: activities.filter((a) => !conversation || a.conversation.split(";messageid=")[0] === conversation) });
          }
          case "/_control/reset":
            activities = [];
            scripts = [];
            return json(res, 200, { ok: true });
        }
        return json(res, 404, { error: "unknown control endpoint" });
      }

      if (req.method === "GET" && path === "/botframework/v1/.well-known/openidconfiguration")
        return json(res, 200, { issuer: "https://api.botframework.com", authorization_endpoint: "https://invalid.botframework.com", jwks_uri: `${baseUrl}/botframework/v1/keys`, id_token_signing_alg_values_supported: ["RS256"], token_endpoint_auth_methods_supported: ["private_key_jwt"] });
      if (req.method === "GET" && path === "/botframework/v1/keys") return json(res, 200, { keys: [{ ...botKey.jwk, endorsements: ["msteams"] }] });
      const entraMeta = /^\/login\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(path);
      if (req.method === "GET" && entraMeta) return json(res, 200, { issuer: `https://login.microsoftonline.com/${entraMeta[1]}/v2.0`, jwks_uri: `${baseUrl}/login/${entraMeta[1]}/discovery/v2.0/keys` });
      if (req.method === "GET" && /^\/login\/[^/]+\/discovery\/v2\.0\/keys$/.test(path)) return json(res, 200, { keys: [entraKey.jwk] });

      const tokenPath = /^\/login\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path);
      if (req.method === "POST" && tokenPath) {
        const script = scripted("token");
        if (script?.status) return json(res, script.status, { error: "temporarily_unavailable" });
        const form = new URLSearchParams(raw);
        if (form.get("grant_type") !== "client_credentials") return json(res, 400, { error: "unsupported_grant_type" });
        if (form.get("scope") !== "https://api.botframework.com/.default") return json(res, 400, { error: "invalid_scope" });
        if (form.get("client_id") !== FAKE_MSTEAMS_APP.appId || form.get("client_secret") !== FAKE_MSTEAMS_APP.appPassword) return json(res, 401, { error: "invalid_client" });
        if (tokenPath[1] !== FAKE_MSTEAMS_APP.tenantId && tokenPath[1] !== "botframework.com") return json(res, 400, { error: "invalid_request", error_description: "AADSTS90002: Tenant not found" });
        const token = `eyJ.fake-${randomUUID()}`;
        tokens.add(token);
        return json(res, 200, { token_type: "Bearer", expires_in: 3599, ext_expires_in: 3599, access_token: token });
      }

      const send = /^\/v3\/conversations\/([^/]+)\/activities(?:\/([^/]+))?$/.exec(path);
      if (send && req.method === "POST") {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
        if (!tokens.has(token)) return json(res, 401, { message: "Authorization has been denied for this request." });
        const body = JSON.parse(raw) as { type?: string; text?: string };
        if (body.type === "typing") {
          activities.push({ id: `t-${randomUUID()}`, conversation: decodeURIComponent(send[1]!), type: "typing", at: Date.now() });
          return json(res, 200, {});
        }
        const script = scripted("send");
        if (script?.status) return json(res, script.status, { error: { code: "ServiceError", message: "scripted" } }, script.retryAfter !== undefined ? { "retry-after": String(script.retryAfter) } : {});
        if ((body.text ?? "").length > 28_000) return json(res, 413, { error: { code: "MessageSizeTooBig", message: "too big" } });
        const id = `1${Date.now()}${Math.floor(Math.random() * 1000)}`;
        activities.push({ id, conversation: decodeURIComponent(send[1]!), replyToId: send[2], type: body.type ?? "message", text: body.text, at: Date.now() });
        return json(res, 201, { id });
      }
      return json(res, 404, { error: { code: "NotFound", message: `no route ${req.method} ${path}` } });
    } catch (error) {
      return json(res, 500, { error: { code: "InternalError", message: error instanceof Error ? error.message : String(error) } });
    }
  });

  const listening = await listenOnLoopback(server);
  baseUrl = listening.url;
  return { url: listening.url, stop: listening.stop };
}
