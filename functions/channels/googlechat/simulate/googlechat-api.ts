import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { exportPKCS8, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { controlBody, fakeServer, json } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { newSigningKey, type SigningKey } from "../../../../scripts/simulate/fakes/signing-keys.ts";

/**
 * A fake Google on loopback for Google Chat apps, speaking Google's wire formats:
 *   GET  /oauth2/v3/certs                         Google's OIDC signing keys (JWK set, Cache-Control max-age)
 *   GET  /service_accounts/v1/metadata/jwk/chat@system.gserviceaccount.com   the Chat service account's keys
 *   POST /token  grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<RS256 JWT>
 *        the assertion must be signed by the test service account, aud = this URL, scope chat.bot
 *        → {access_token, expires_in, token_type}; otherwise 400 {error: "invalid_grant"}
 *   POST   /v1/spaces/{s}/messages?messageId=client-…&messageReplyOption=…   {text, thread?}
 *          a messageId seen before → 409 ALREADY_EXISTS (nothing posted again)
 *   PATCH  /v1/spaces/{s}/messages/{m}?updateMask=text   {text}      404 when there is no such message
 *   DELETE /v1/spaces/{s}/messages/{m}
 *   GET    /v1/media/{resourceName}?alt=media     the bytes of an uploaded attachment
 * Chat API calls need `Authorization: Bearer <a token /token issued>`; a revoked one → 401.
 * Errors are Google's JSON shape: {error: {code, message, status}}.
 *
 * Control endpoints (tests inside workerd call these by plain fetch):
 *   POST /_control/sign {audienceType: "app-url"|"project-number", audience, email?, emailVerified?, issuer?,
 *        expiresInSeconds?, forged?}  → {token}: what Google Chat would send (forged: signed by a key Google never published)
 *   POST /_control/rotate {audienceType}   publishes a new signing key and retires the old one
 *   POST /_control/script {api: "create"|"patch"|"token", space?, times?, status?, retryAfter?, dropConnection?, delayMs?}
 *        the next `times` (default 1) calls of `api` (in `space` when given) fail with `status`;
 *        `dropConnection` applies the call, then destroys the socket; `delayMs` applies it and holds
 *        the answer that long (the caller may be gone by then: a crash after Google took the send)
 *   POST /_control/media {resourceName, content}
 *   POST /_control/revoke-tokens           every issued access token stops working (expired early)
 *   GET  /_control/messages?space=         messages in order: {name, text, thread, deleted, edits}
 *   GET  /_control/calls?api=              recorded calls
 *   GET  /_control/service-account         the service account key JSON (for the Worker's secret)
 *   POST /_control/reset
 */

export interface FakeGoogleChatApi {
  url: string;
  serviceAccountJson: string;
  stop(): Promise<void>;
}

interface ChatMessage {
  name: string;
  space: string;
  text: string;
  thread: string;
  deleted: boolean;
  edits: number;
  at: number;
}

interface Script {
  api: string;
  space?: string;
  times: number;
  status?: number;
  retryAfter?: number;
  dropConnection?: boolean;
  delayMs?: number;
}

const CHAT_EMAIL = "chat@system.gserviceaccount.com";

export async function startFakeGoogleChatApi(): Promise<FakeGoogleChatApi> {
  const keys: Record<"app-url" | "project-number", SigningKey> = {
    "app-url": await newSigningKey("oidc"),
    "project-number": await newSigningKey("chat"),
  };
  const account = await generateKeyPair("RS256", { extractable: true });
  const serviceAccountEmail = "edgeclaw-test@fake-project.iam.gserviceaccount.com";
  const servicePublicKey = account.publicKey;
  const serviceAccountPem = await exportPKCS8(account.privateKey);
  let messages: ChatMessage[] = [];
  let calls: Array<{ api: string; path: string; body: unknown; at: number }> = [];
  let scripts: Script[] = [];
  let tokens = new Set<string>();
  let media = new Map<string, string>();
  let baseUrl = "";

  const googleError = (
    res: ServerResponse,
    code: number,
    status: string,
    message: string,
    headers: Record<string, string> = {},
  ) => json(res, code, { error: { code, message, status } }, headers);

  /** The first script for `api` (in `space`) with times left: consumed and returned. */
  const scripted = (api: string, space?: string): Script | undefined => {
    const script = scripts.find(
      (s) => s.api === api && (!s.space || s.space === space) && s.times > 0,
    );
    if (script) script.times -= 1;
    return script;
  };
  const authorized = (req: IncomingMessage) =>
    tokens.has(/^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "");

  async function sign(body: Record<string, unknown>): Promise<string> {
    const audienceType = body.audienceType === "project-number" ? "project-number" : "app-url";
    const key = body.forged ? await newSigningKey("forged") : keys[audienceType];
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> =
      audienceType === "app-url"
        ? { email: body.email ?? CHAT_EMAIL, email_verified: body.emailVerified ?? true }
        : {};
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: key.kid, typ: "JWT" })
      .setIssuer(
        String(
          body.issuer ?? (audienceType === "app-url" ? "https://accounts.google.com" : CHAT_EMAIL),
        ),
      )
      .setAudience(String(body.audience))
      .setIssuedAt(now - 5)
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
    // ---- control ---------------------------------------------------------------------------
    if (path.startsWith("/_control/")) {
      const body = controlBody(raw);
      switch (path) {
        case "/_control/sign":
          return json(res, 200, { token: await sign(body) });
        case "/_control/rotate": {
          const kind = body.audienceType === "project-number" ? "project-number" : "app-url";
          keys[kind] = await newSigningKey(kind === "app-url" ? "oidc" : "chat");
          return json(res, 200, { kid: keys[kind].kid });
        }
        case "/_control/script":
          scripts.push({
            api: String(body.api),
            ...(typeof body.space === "string" ? { space: body.space } : {}),
            times: Number(body.times ?? 1),
            status: body.status as number | undefined,
            retryAfter: body.retryAfter as number | undefined,
            dropConnection: body.dropConnection === true,
            delayMs: typeof body.delayMs === "number" ? body.delayMs : undefined,
          });
          return json(res, 200, { ok: true });
        case "/_control/media":
          media.set(String(body.resourceName), String(body.content ?? ""));
          return json(res, 200, { ok: true });
        case "/_control/revoke-tokens":
          tokens = new Set();
          return json(res, 200, { ok: true });
        case "/_control/messages": {
          const space = url.searchParams.get("space");
          return json(res, 200, { messages: messages.filter((m) => !space || m.space === space) });
        }
        case "/_control/calls": {
          const api = url.searchParams.get("api");
          return json(res, 200, { calls: calls.filter((c) => !api || c.api === api) });
        }
        case "/_control/service-account":
          return json(res, 200, JSON.parse(serviceAccountJson()));
        case "/_control/reset":
          messages = [];
          calls = [];
          scripts = [];
          media = new Map();
          return json(res, 200, { ok: true });
      }
      return json(res, 404, { error: "unknown control endpoint" });
    }

    // ---- key sets --------------------------------------------------------------------------
    if (req.method === "GET" && path === "/oauth2/v3/certs")
      return json(
        res,
        200,
        { keys: [keys["app-url"].jwk] },
        { "cache-control": "public, max-age=300" },
      );
    if (req.method === "GET" && path === `/service_accounts/v1/metadata/jwk/${CHAT_EMAIL}`)
      return json(
        res,
        200,
        { keys: [keys["project-number"].jwk] },
        { "cache-control": "public, max-age=300" },
      );

    // ---- token exchange --------------------------------------------------------------------
    if (req.method === "POST" && path === "/token") {
      calls.push({ api: "token", path, body: null, at: Date.now() });
      const script = scripted("token");
      if (script?.status)
        return json(res, script.status, {
          error: "scripted",
          error_description: `HTTP ${script.status}`,
        });
      const form = new URLSearchParams(raw);
      if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer")
        return json(res, 400, { error: "unsupported_grant_type" });
      try {
        const { payload } = await jwtVerify(form.get("assertion") ?? "", servicePublicKey, {
          issuer: serviceAccountEmail,
          audience: `${baseUrl}/token`,
        });
        if (payload.scope !== "https://www.googleapis.com/auth/chat.bot")
          return json(res, 400, { error: "invalid_scope" });
      } catch (error) {
        return json(res, 400, {
          error: "invalid_grant",
          error_description: error instanceof Error ? error.message : String(error),
        });
      }
      const token = `ya29.fake-${randomUUID()}`;
      tokens.add(token);
      return json(res, 200, { access_token: token, expires_in: 3599, token_type: "Bearer" });
    }

    // ---- Chat API --------------------------------------------------------------------------
    const create = /^\/v1\/(spaces\/[^/]+)\/messages$/.exec(path);
    const one = /^\/v1\/(spaces\/[^/]+)\/messages\/([^/]+)$/.exec(path);
    const mediaPath = /^\/v1\/media\/(.+)$/.exec(path);
    if (create || one || mediaPath) {
      const api = create
        ? "create"
        : mediaPath
          ? "media"
          : req.method === "PATCH"
            ? "patch"
            : req.method === "DELETE"
              ? "delete"
              : "get";
      const body = raw.length ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
      calls.push({ api, path: `${path}${url.search}`, body, at: Date.now() });
      if (!authorized(req))
        return googleError(
          res,
          401,
          "UNAUTHENTICATED",
          "Request had invalid authentication credentials.",
        );
      const script = scripted(api, (create ?? one)?.[1]);
      if (script?.status && !script.dropConnection)
        return googleError(
          res,
          script.status,
          script.status === 429 ? "RESOURCE_EXHAUSTED" : "UNAVAILABLE",
          "scripted failure",
          script.retryAfter !== undefined ? { "retry-after": String(script.retryAfter) } : {},
        );
      let answer: { status: number; body: unknown };
      if (mediaPath) {
        const content = media.get(decodeURIComponent(mediaPath[1]!));
        if (content === undefined) return googleError(res, 404, "NOT_FOUND", "no such attachment");
        res.writeHead(200, { "content-type": "application/octet-stream" });
        return res.end(content);
      } else if (create && req.method === "POST") {
        const space = create[1]!;
        const messageId = url.searchParams.get("messageId") ?? `m-${randomUUID()}`;
        if (!/^client-[a-z0-9-]{1,56}$/.test(messageId) && url.searchParams.has("messageId"))
          return googleError(res, 400, "INVALID_ARGUMENT", "invalid messageId");
        const name = `${space}/messages/${messageId}`;
        const text = String(body?.text ?? "");
        if (text.length > 4096)
          return googleError(res, 400, "INVALID_ARGUMENT", "Maximum length of the field is 4096");
        if (messages.some((m) => m.name === name)) {
          // A slow answer is slow whatever it says: a repeat's 409 is held like any other.
          if (script?.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
          return googleError(res, 409, "ALREADY_EXISTS", `Message ${name} already exists`);
        }
        const requested = (body?.thread as { name?: string } | undefined)?.name;
        const thread =
          requested && url.searchParams.get("messageReplyOption")
            ? requested
            : `${space}/threads/t-${randomUUID().slice(0, 8)}`;
        const message: ChatMessage = {
          name,
          space,
          text,
          thread,
          deleted: false,
          edits: 0,
          at: Date.now(),
        };
        messages.push(message);
        answer = {
          status: 200,
          body: { name, text, thread: { name: thread }, space: { name: space } },
        };
      } else if (one) {
        const name = `${one[1]}/messages/${one[2]}`;
        const message = messages.find((m) => m.name === name && !m.deleted);
        if (!message) return googleError(res, 404, "NOT_FOUND", `Message ${name} not found`);
        if (req.method === "PATCH") {
          if (url.searchParams.get("updateMask") !== "text")
            return googleError(res, 400, "INVALID_ARGUMENT", "updateMask must name text");
          message.text = String(body?.text ?? "");
          message.edits += 1;
        } else if (req.method === "DELETE") {
          message.deleted = true;
        }
        answer = {
          status: 200,
          body:
            req.method === "DELETE"
              ? {}
              : { name, text: message.text, thread: { name: message.thread } },
        };
      } else {
        return googleError(res, 405, "INVALID_ARGUMENT", "method not allowed");
      }
      if (script?.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
      if (script?.dropConnection) return req.socket.destroy();
      return json(res, answer.status, answer.body);
    }
    return googleError(res, 404, "NOT_FOUND", `no route ${req.method} ${path}`);
  }

  const server = fakeServer(handle);

  function serviceAccountJson(): string {
    return JSON.stringify({
      type: "service_account",
      client_email: serviceAccountEmail,
      private_key: serviceAccountPem,
      token_uri: `${baseUrl}/token`,
    });
  }

  const listening = await listenOnLoopback(server);
  baseUrl = listening.url;
  return { url: listening.url, serviceAccountJson: serviceAccountJson(), stop: listening.stop };
}
