import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { controlBody, fakeServer, json } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { newSigningKey } from "../../../../scripts/simulate/fakes/signing-keys.ts";

/**
 * A fake Microsoft on loopback for Teams bots, speaking the Bot Framework's wire formats:
 *   GET  /botframework/v1/.well-known/openidconfiguration   {issuer, jwks_uri}
 *   GET  /botframework/v1/keys                              the Bot Framework signing keys (JWK set)
 *   GET  /login/{tenant}/v2.0/.well-known/openid-configuration, /login/{tenant}/discovery/v2.0/keys   Entra
 *   POST /login/{tenant|botframework.com}/oauth2/v2.0/token  grant_type=client_credentials, client_id,
 *        client_secret, scope=https://api.botframework.com/.default → {token_type, expires_in, access_token}
 *        (wrong secret → 401 {error: "invalid_client"})
 *   POST /v3/conversations/{id}/activities[/{replyToId}]    {type, text, textFormat} → {id}; with a
 *        `streaminfo` entity: Teams' native streaming in personal chats (see streamActivity)
 *   PUT  /v3/conversations/{id}/activities/{activityId}     edit a posted message (counted in `updates`)
 *   DELETE /v3/conversations/{id}/activities/{activityId}
 * Connector calls need `Authorization: Bearer <a token the token endpoint issued>`; revoked → 401.
 *
 * Control endpoints (tests in workerd call these by plain fetch):
 *   POST /_control/sign {audience?, serviceUrl?, noServiceUrl?, issuer?, expiresInSeconds?, forged?, kid?, entraTenant?, tid?} → {token}
 *   POST /_control/rotate      new Bot Framework signing key; the old one is retired
 *   POST /_control/script {api: "send"|"token"|"stream"|"final"|"update"|"delete", times?, status?, retryAfter?,
 *        drop?, conversation?}   drop: do the call, then cut the connection before answering (outcome unknown)
 *   POST /_control/revoke-tokens
 *   GET  /_control/activities?conversation=   posted activities {id, conversation, type, text, at,
 *        streamId?, streamType?, streamSequence?, updates?, deleted?}
 *   POST /_control/file {path, content | sizeBytes, auth?, redirect?}   a file served at GET path (auth: needs a bot token)
 *   GET  /_control/downloads?path=   {path, host, authorization} of every file request
 *   POST /_control/reset
 */

interface FakeActivityRecord {
  id: string;
  conversation: string;
  replyToId?: string;
  type: string;
  text?: string;
  at: number;
  streamId?: string;
  streamType?: string;
  streamSequence?: number;
  /** PUT edits applied to a posted message. */
  updates?: number;
  deleted?: boolean;
}

export interface FakeMsTeamsApi {
  url: string;
  stop(): Promise<void>;
}

export const FAKE_MSTEAMS_APP = {
  appId: "00000000-aaaa-4bbb-8ccc-000000000001",
  appPassword: "test-teams-secret",
  tenantId: "11111111-2222-4333-8444-555555555555",
};

export async function startFakeMsTeamsApi(): Promise<FakeMsTeamsApi> {
  let botKey = await newSigningKey("bf");
  const entraKey = await newSigningKey("entra");
  let activities: FakeActivityRecord[] = [];
  let scripts: Array<{
    api: string;
    times: number;
    status?: number;
    retryAfter?: number;
    drop?: boolean;
    conversation?: string;
  }> = [];
  /** Files users "sent": GET path → content; `auth` needs a bot token (Bot Connector attachments), `redirect` answers 302. */
  let files = new Map<string, { content: string; auth: boolean; redirect?: string }>();
  let downloads: Array<{ path: string; host: string; authorization: boolean }> = [];
  /** Native streams (personal chats only): id → sequence seen, text shown, ended. */
  let streams = new Map<
    string,
    { conversation: string; sequence: number; text: string; ended: boolean }
  >();

  /**
   * Teams' streaming rules as documented: personal chats only; the first update (no streamId) opens
   * a stream whose id is the answer; each later update names it with a higher streamSequence, and
   * `streaming` text must extend what was shown; the `final` message ends it once; anything into an
   * ended stream is refused 403 ContentStreamNotAllowed.
   */
  function streamActivity(
    res: ServerResponse,
    conversation: string,
    body: { type?: string; text?: string },
    info: { streamId?: string; streamType?: string; streamSequence?: number },
  ) {
    const script = scripted(info.streamType === "final" ? "final" : "stream", conversation);
    if (script?.status)
      return json(res, script.status, {
        error: {
          code: script.status === 403 ? "ContentStreamNotAllowed" : "ServiceError",
          message: "scripted",
        },
      });
    if (!conversation.startsWith("a:"))
      return json(res, 403, {
        error: {
          code: "ContentStreamNotAllowed",
          message: "streaming is only supported in personal chats",
        },
      });
    const refuse = (status: number, code: string, message: string) =>
      json(res, status, { error: { code, message } });
    if (info.streamType === "final") {
      const stream = info.streamId ? streams.get(info.streamId) : undefined;
      if (!stream || stream.conversation !== conversation)
        return refuse(400, "BadRequest", "unknown stream");
      if (stream.ended)
        return refuse(
          403,
          "ContentStreamNotAllowed",
          "Content stream is not allowed on an already completed streamed message",
        );
      if (body.type !== "message")
        return refuse(400, "BadRequest", "a final stream activity is a message");
      stream.ended = true;
      activities.push({
        id: info.streamId!,
        conversation,
        type: "message",
        text: body.text,
        streamId: info.streamId,
        streamType: "final",
        at: Date.now(),
      });
      return script?.drop ? res.destroy() : json(res, 201, { id: info.streamId });
    }
    if (
      body.type !== "typing" ||
      (info.streamType !== "informative" && info.streamType !== "streaming")
    )
      return refuse(400, "BadRequest", "stream updates are typing activities");
    if (!Number.isInteger(info.streamSequence) || info.streamSequence! < 1)
      return refuse(400, "BadRequest", "streamSequence required");
    let id = info.streamId;
    if (!id) {
      if (info.streamSequence !== 1)
        return refuse(400, "BadRequest", "a new stream starts at streamSequence 1");
      if ([...streams.values()].some((s) => s.conversation === conversation && !s.ended))
        return refuse(403, "ContentStreamNotAllowed", "one stream per chat at a time");
      id = `1${Date.now()}${Math.floor(Math.random() * 1000)}`;
      streams.set(id, { conversation, sequence: 0, text: "", ended: false });
    }
    const stream = streams.get(id);
    if (!stream || stream.conversation !== conversation)
      return refuse(400, "BadRequest", "unknown stream");
    if (stream.ended)
      return refuse(
        403,
        "ContentStreamNotAllowed",
        "Content stream is not allowed on an already completed streamed message",
      );
    if (info.streamSequence! <= stream.sequence)
      return refuse(400, "BadRequest", "streamSequence out of order");
    if (info.streamType === "streaming") {
      if (!(body.text ?? "").startsWith(stream.text))
        return refuse(
          403,
          "ContentStreamNotAllowed",
          "streamed text must include what was streamed before",
        );
      stream.text = body.text ?? "";
    }
    stream.sequence = info.streamSequence!;
    activities.push({
      id: `t-${randomUUID()}`,
      conversation,
      type: "typing",
      text: body.text,
      streamId: id,
      streamType: info.streamType,
      streamSequence: info.streamSequence,
      at: Date.now(),
    });
    return script?.drop ? res.destroy() : json(res, 201, { id });
  }
  let tokens = new Set<string>();
  let baseUrl = "";

  /** The next scripted answer for `api`; a script naming a conversation applies only there (tests run in parallel). */
  const scripted = (api: string, conversation?: string) => {
    const script = scripts.find(
      (s) =>
        s.api === api &&
        s.times > 0 &&
        (!s.conversation || s.conversation === conversation?.split(";messageid=")[0]),
    );
    if (script) script.times -= 1;
    return script;
  };

  async function sign(body: Record<string, unknown>): Promise<string> {
    const key = body.forged ? await newSigningKey("bf") : body.entraTenant ? entraKey : botKey;
    const now = Math.floor(Date.now() / 1000);
    // As Microsoft's tokens carry it: `serviceurl`, lower case (Entra tokens too, unless noServiceUrl).
    const claims: Record<string, unknown> = {
      ...(body.entraTenant ? { tid: body.tid ?? body.entraTenant } : {}),
      ...(body.noServiceUrl ? {} : { serviceurl: body.serviceUrl ?? baseUrl }),
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

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    raw: string,
  ): Promise<unknown> {
    const path = url.pathname;
    if (path.startsWith("/_control/")) {
      const body = controlBody(raw);
      switch (path) {
        case "/_control/sign":
          return json(res, 200, { token: await sign(body) });
        case "/_control/rotate":
          botKey = await newSigningKey("bf");
          return json(res, 200, { kid: botKey.kid });
        case "/_control/script":
          scripts.push({
            api: String(body.api),
            times: Number(body.times ?? 1),
            status: body.status as number | undefined,
            retryAfter: body.retryAfter as number | undefined,
            drop: body.drop === true,
            ...(typeof body.conversation === "string" ? { conversation: body.conversation } : {}),
          });
          return json(res, 200, { ok: true });
        case "/_control/revoke-tokens":
          tokens = new Set();
          return json(res, 200, { ok: true });
        case "/_control/activities": {
          const conversation = url.searchParams.get("conversation");
          return json(res, 200, {
            activities: activities.filter(
              (a) => !conversation || a.conversation.split(";messageid=")[0] === conversation,
            ),
          });
        }
        case "/_control/file":
          files.set(String(body.path), {
            content: body.sizeBytes
              ? "x".repeat(Number(body.sizeBytes))
              : String(body.content ?? ""),
            auth: body.auth === true,
            ...(typeof body.redirect === "string" ? { redirect: body.redirect } : {}),
          });
          return json(res, 200, { ok: true });
        case "/_control/downloads": {
          const only = url.searchParams.get("path");
          return json(res, 200, { downloads: downloads.filter((d) => !only || d.path === only) });
        }
        case "/_control/reset":
          files = new Map();
          downloads = [];
          activities = [];
          scripts = [];
          streams = new Map();
          return json(res, 200, { ok: true });
      }
      return json(res, 404, { error: "unknown control endpoint" });
    }

    if (req.method === "GET" && path === "/botframework/v1/.well-known/openidconfiguration")
      return json(res, 200, {
        issuer: "https://api.botframework.com",
        authorization_endpoint: "https://invalid.botframework.com",
        jwks_uri: `${baseUrl}/botframework/v1/keys`,
        id_token_signing_alg_values_supported: ["RS256"],
        token_endpoint_auth_methods_supported: ["private_key_jwt"],
      });
    if (req.method === "GET" && path === "/botframework/v1/keys")
      return json(res, 200, { keys: [{ ...botKey.jwk, endorsements: ["msteams"] }] });
    const entraMeta = /^\/login\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(path);
    if (req.method === "GET" && entraMeta)
      return json(res, 200, {
        issuer: `https://login.microsoftonline.com/${entraMeta[1]}/v2.0`,
        jwks_uri: `${baseUrl}/login/${entraMeta[1]}/discovery/v2.0/keys`,
      });
    if (req.method === "GET" && /^\/login\/[^/]+\/discovery\/v2\.0\/keys$/.test(path))
      return json(res, 200, { keys: [entraKey.jwk] });

    const file = req.method === "GET" ? files.get(path) : undefined;
    if (file) {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      downloads.push({
        path,
        host: String(req.headers.host ?? ""),
        authorization: bearer !== undefined,
      });
      if (file.auth && (!bearer || !tokens.has(bearer)))
        return json(res, 401, { message: "Authorization has been denied for this request." });
      if (file.redirect) {
        res.writeHead(302, { location: file.redirect });
        return res.end();
      }
      res.writeHead(200, {
        "content-type": "text/plain; charset=utf-8",
        "content-length": String(Buffer.byteLength(file.content)),
      });
      return res.end(file.content);
    }

    const tokenPath = /^\/login\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path);
    if (req.method === "POST" && tokenPath) {
      const script = scripted("token");
      if (script?.status) return json(res, script.status, { error: "temporarily_unavailable" });
      const form = new URLSearchParams(raw);
      if (form.get("grant_type") !== "client_credentials")
        return json(res, 400, { error: "unsupported_grant_type" });
      if (form.get("scope") !== "https://api.botframework.com/.default")
        return json(res, 400, { error: "invalid_scope" });
      if (
        form.get("client_id") !== FAKE_MSTEAMS_APP.appId ||
        form.get("client_secret") !== FAKE_MSTEAMS_APP.appPassword
      )
        return json(res, 401, { error: "invalid_client" });
      if (tokenPath[1] !== FAKE_MSTEAMS_APP.tenantId && tokenPath[1] !== "botframework.com")
        return json(res, 400, {
          error: "invalid_request",
          error_description: "AADSTS90002: Tenant not found",
        });
      const token = `eyJ.fake-${randomUUID()}`;
      tokens.add(token);
      return json(res, 200, {
        token_type: "Bearer",
        expires_in: 3599,
        ext_expires_in: 3599,
        access_token: token,
      });
    }

    const send = /^\/v3\/conversations\/([^/]+)\/activities(?:\/([^/]+))?$/.exec(path);
    if (send && (req.method === "POST" || req.method === "PUT" || req.method === "DELETE")) {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
      if (!tokens.has(token))
        return json(res, 401, { message: "Authorization has been denied for this request." });
      const conversation = decodeURIComponent(send[1]!);
      const base = conversation.split(";messageid=")[0]!;
      const target = send[2] ? decodeURIComponent(send[2]) : undefined;
      if (req.method === "PUT" || req.method === "DELETE") {
        const script = scripted(req.method === "PUT" ? "update" : "delete", conversation);
        if (script?.status)
          return json(
            res,
            script.status,
            { error: { code: "ServiceError", message: "scripted" } },
            script.retryAfter !== undefined ? { "retry-after": String(script.retryAfter) } : {},
          );
        const existing = activities.find(
          (a) =>
            a.id === target &&
            a.conversation.split(";messageid=")[0] === base &&
            a.type === "message",
        );
        if (!existing || existing.deleted)
          return json(res, 404, { error: { code: "NotFound", message: "activity not found" } });
        if (req.method === "DELETE") {
          existing.deleted = true;
          return json(res, 200, {});
        }
        const body = JSON.parse(raw) as { text?: string };
        existing.text = body.text;
        existing.updates = (existing.updates ?? 0) + 1;
        const reply = () => json(res, 200, { id: existing.id });
        return script?.drop ? res.destroy() : reply();
      }
      const body = JSON.parse(raw) as {
        type?: string;
        text?: string;
        id?: string;
        entities?: Array<{
          type?: string;
          streamId?: string;
          streamType?: string;
          streamSequence?: number;
        }>;
      };
      const info = body.entities?.find((e) => e.type === "streaminfo");
      if (info) return streamActivity(res, conversation, body, info);
      if (body.type === "typing") {
        activities.push({ id: `t-${randomUUID()}`, conversation, type: "typing", at: Date.now() });
        return json(res, 200, {});
      }
      const script = scripted("send", conversation);
      if (script?.status)
        return json(
          res,
          script.status,
          { error: { code: "ServiceError", message: "scripted" } },
          script.retryAfter !== undefined ? { "retry-after": String(script.retryAfter) } : {},
        );
      if ((body.text ?? "").length > 28_000)
        return json(res, 413, { error: { code: "MessageSizeTooBig", message: "too big" } });
      const id = `1${Date.now()}${Math.floor(Math.random() * 1000)}`;
      activities.push({
        id,
        conversation,
        replyToId: target,
        type: body.type ?? "message",
        text: body.text,
        at: Date.now(),
      });
      return script?.drop ? res.destroy() : json(res, 201, { id });
    }
    return json(res, 404, {
      error: { code: "NotFound", message: `no route ${req.method} ${path}` },
    });
  }

  const server = fakeServer(handle);

  const listening = await listenOnLoopback(server);
  baseUrl = listening.url;
  return { url: listening.url, stop: listening.stop };
}
