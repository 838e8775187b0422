import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash } from "node:crypto";
import {
  controlBody,
  fakeServer,
  json,
  parseMultipart,
} from "../../../../scripts/simulate/fakes/kit.ts";
import { FakeDiscordGateway } from "./discord-gateway.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";

/**
 * A fake Discord REST API (v10) on loopback, speaking its wire format
 * (https://discord.com/developers/docs/reference): `Authorization: Bot <token>`, JSON bodies (or
 * multipart uploads: `payload_json` + `files[n]`, each file matched to `attachments[].id` and kept
 * as an attachment with filename, size and SHA-256; a file part without its attachment entry, or
 * an attachment without its part, is 400 50035), errors
 * `{ message, code }`, 429 `{ message, retry_after, global }` with `Retry-After` and
 * `X-RateLimit-Bucket` headers. The bot's user id is its token's first segment (base64), as in
 * Discord; a token ending in "invalid" is 401.
 *
 * It behaves as Discord does where edgeclaw depends on it: content over 2000 characters → 400
 * (50035), empty content → 400 (50006), `nonce` + `enforce_nonce` returns the message already
 * created with that nonce by the same author instead of a second one; history
 * (`GET /channels/{id}/messages?after=&limit=`) is newest first and leaves `nonce` out; message ids
 * are increasing snowflakes; interaction webhooks (`/webhooks/{app}/{token}`) need no auth header;
 * `DELETE …/messages/@original` removes the deferral's "thinking…" (404 once it is gone).
 *
 * Control endpoints:
 *   POST /_control/script {route: "POST /channels/messages" | "PATCH /channels/messages" | "POST /typing" | …, channelId?, times?, status?, retryAfter?, global?, dropConnection?, dropBeforeCreate?}
 *   POST /_control/seed {channelId, authorId, content, at}   a message created at `at` (ms; its snowflake says so)
 *   POST /_control/file {path: "/attachments/…", body, contentType?, redirect?, understateLength?}   a CDN file;
 *        GET /_control/downloads?path= → who fetched it (and whether an Authorization header came along)
 *   POST /_control/ratelimit {channelId, limit, resetAfter}  that channel's message bucket: `limit` posts per
 *        `resetAfter` s, X-RateLimit-* headers on each answer, 429 once empty; GET ?channel_id= → {refused, …}
 *   GET  /_control/calls?route=&channel_id=     recorded calls (token cut to its last 4)
 *   GET  /_control/messages?channel_id=         messages posted by bots (content, edits, deleted, reference, nonce, flags)
 *   POST /_control/gateway {url}                what GET /gateway/bot answers (default: its own Gateway, below)
 *   POST /_control/dispatch {t, d}              a dispatch on its own Gateway's live session (409 while no
 *        client has identified): the same server takes Gateway connections (discord-gateway.ts), for any
 *        token the REST API accepts, with READY naming the token's bot
 *   POST /_control/reset
 */

export interface FakeDiscordApi {
  url: string;
  stop(): Promise<void>;
}

interface Script {
  route: string;
  channelId?: string;
  times: number;
  status?: number;
  retryAfter?: number;
  global?: boolean;
  dropConnection?: boolean;
  /** Drop the connection before the message is created (the send never reached Discord). */
  dropBeforeCreate?: boolean;
}

interface FakeMessage {
  id: string;
  channel_id: string;
  author: { id: string; username: string; bot: true };
  content: string;
  nonce?: string;
  flags?: number;
  message_reference?: { message_id: string };
  interaction?: string;
  attachments?: FakeAttachment[];
  edits: number;
  deleted?: boolean;
  at: number;
}

interface FakeAttachment {
  id: string;
  filename: string;
  size: number;
  content_type: string;
  sha256: string;
}

let snowflakeCounter = 0n;
function nextSnowflake(): string {
  snowflakeCounter = (snowflakeCounter + 1n) % 4096n;
  return String(((BigInt(Date.now()) - 1_420_070_400_000n) << 22n) | snowflakeCounter);
}

export function botIdOfToken(token: string): string | undefined {
  try {
    const id = Buffer.from(token.split(".")[0] ?? "", "base64").toString("utf8");
    return /^\d+$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

export async function startFakeDiscordApi(): Promise<FakeDiscordApi> {
  let calls: Array<{
    route: string;
    method: string;
    path: string;
    channelId?: string;
    body: unknown;
    token?: string;
    at: number;
  }> = [];
  let messages: FakeMessage[] = [];
  let scripts: Script[] = [];
  let gatewayUrl = "ws://127.0.0.1:1/";
  let files = new Map<
    string,
    { body: string; contentType?: string; redirect?: string; understateLength?: boolean }
  >();
  let downloads: Array<{ path: string; authorization: string | null }> = [];
  let limits = new Map<
    string,
    { limit: number; resetAfter: number; remaining: number; resetAt: number; refused: number }
  >();

  const server = fakeServer(handle);
  const gateway = new FakeDiscordGateway(
    (token) => botIdOfToken(token) !== undefined && !token.endsWith("invalid"),
    { server, botUserIdOf: botIdOfToken },
  );
  // Discord's own cadence: a companion that heartbeats against this fake idles as it would there.
  gateway.heartbeatInterval = 41_250;

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    raw: string,
    bytes: Buffer,
  ) {
    if (url.pathname.startsWith("/_control/")) return control(url, req.method ?? "GET", raw, res);
    if (url.pathname.startsWith("/attachments/")) {
      // The CDN: attachment URLs are signed in their query and need no Authorization header.
      downloads.push({ path: url.pathname, authorization: req.headers.authorization ?? null });
      const file = files.get(url.pathname);
      if (!file) return json(res, 404, { message: "404: Not Found", code: 0 });
      if (file.redirect) return void res.writeHead(302, { location: file.redirect }).end();
      const bytes = Buffer.from(file.body, "utf8");
      res.writeHead(200, {
        "content-type": file.contentType ?? "application/octet-stream",
        ...(file.understateLength ? {} : { "content-length": String(bytes.length) }),
      });
      return res.end(bytes);
    }
    const path = url.pathname.replace(/^\/api\/v\d+/, "");
    const method = req.method ?? "GET";
    let body: Record<string, unknown> = {};
    let attachments: FakeAttachment[] | undefined;
    try {
      const upload = await parseMultipart(req.headers["content-type"], bytes);
      body = upload
        ? (JSON.parse(upload.fields.payload_json ?? "{}") as Record<string, unknown>)
        : raw
          ? (JSON.parse(raw) as Record<string, unknown>)
          : {};
      if (upload) {
        const declared = (body.attachments ?? []) as Array<{
          id?: number | string;
          filename?: string;
        }>;
        attachments = upload.files.map((file) => {
          const id = /^files\[(\d+)\]$/.exec(file.field)?.[1];
          const entry = declared.find((a) => String(a.id) === id);
          if (!entry) throw new Error(`no attachment for ${file.field}`);
          return {
            id: nextSnowflake(),
            filename: entry.filename ?? file.name,
            size: file.bytes.byteLength,
            content_type: file.type,
            sha256: createHash("sha256").update(file.bytes).digest("hex"),
          };
        });
        if (declared.length !== attachments.length) throw new Error("attachments without files");
      }
    } catch (error) {
      return json(res, 400, {
        message: error instanceof SyntaxError ? "400: Bad Request" : "Invalid Form Body",
        code: error instanceof SyntaxError ? 50109 : 50035,
      });
    }
    const channel = /^\/channels\/(\d+)\/(messages|typing)(?:\/(\d+))?$/.exec(path);
    const hook = /^\/webhooks\/(\d+)\/([^/]+)(?:\/messages\/(@original|\d+))?$/.exec(path);
    const route = channel
      ? `${method} /${channel[2] === "typing" ? "typing" : "channels/messages"}`
      : hook
        ? `${method} /webhooks${hook[3] ? "/messages" : ""}`
        : `${method} ${path}`;
    const auth = req.headers.authorization;
    const token = auth?.startsWith("Bot ") ? auth.slice(4) : undefined;
    calls.push({
      route,
      method,
      path,
      ...(channel ? { channelId: channel[1] } : {}),
      body,
      ...(token ? { token: `…${token.slice(-4)}` } : {}),
      at: Date.now(),
    });

    const script = scripts.find(
      (s) => s.route === route && (!s.channelId || s.channelId === channel?.[1]) && s.times > 0,
    );
    if (script) script.times -= 1;
    if (script?.status) {
      if (script.status === 429) {
        const retryAfter = script.retryAfter ?? 1;
        res.setHeader("retry-after", String(Math.ceil(retryAfter)));
        res.setHeader("x-ratelimit-bucket", "fakebucket");
        res.setHeader("x-ratelimit-scope", script.global ? "global" : "user");
        return json(res, 429, {
          message: "You are being rate limited.",
          retry_after: retryAfter,
          global: script.global ?? false,
        });
      }
      return json(res, script.status, { message: `${script.status}: scripted failure`, code: 0 });
    }

    if (path === "/gateway/bot" && method === "GET") {
      if (!token || !botIdOfToken(token) || token.endsWith("invalid"))
        return json(res, 401, { message: "401: Unauthorized", code: 0 });
      return json(res, 200, {
        url: gatewayUrl,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
      });
    }
    if (hook)
      return webhook(
        hook[1]!,
        hook[2]!,
        hook[3],
        method,
        body,
        res,
        url,
        script?.dropConnection === true,
        req,
      );
    if (!channel) return json(res, 404, { message: "404: Not Found", code: 0 });
    const botId = token && !token.endsWith("invalid") ? botIdOfToken(token) : undefined;
    if (!botId) return json(res, 401, { message: "401: Unauthorized", code: 0 });
    const channelId = channel[1]!;
    const answer = (status: number, payload: unknown) =>
      script?.dropConnection ? void req.socket.destroy() : json(res, status, payload);

    if (channel[2] === "typing")
      return script?.dropConnection ? void req.socket.destroy() : void res.writeHead(204).end();
    const messageId = channel[3];
    if (method === "GET" && !messageId) {
      const after = BigInt(url.searchParams.get("after") ?? "0");
      const limit = Number(url.searchParams.get("limit") ?? 50);
      const found = messages
        .filter((m) => m.channel_id === channelId && !m.deleted && BigInt(m.id) > after)
        .sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1))
        .slice(0, limit)
        .map(({ nonce: _nonce, edits: _edits, at: _at, deleted: _deleted, ...visible }) => visible);
      return json(res, 200, found);
    }
    if (method === "POST" && !messageId) {
      if (script?.dropBeforeCreate) return void req.socket.destroy();
      const limit = limits.get(channelId);
      if (limit) {
        // Discord's per-channel message bucket: headers on every answer, a 429 once it is empty.
        const now = Date.now();
        if (now >= limit.resetAt)
          Object.assign(limit, { remaining: limit.limit, resetAt: now + limit.resetAfter * 1000 });
        const resetAfter = ((limit.resetAt - now) / 1000).toFixed(3);
        res.setHeader("x-ratelimit-bucket", "fakemessagebucket");
        res.setHeader("x-ratelimit-limit", String(limit.limit));
        res.setHeader("x-ratelimit-reset-after", resetAfter);
        if (limit.remaining <= 0) {
          limit.refused += 1;
          res.setHeader("x-ratelimit-remaining", "0");
          res.setHeader("x-ratelimit-scope", "user");
          res.setHeader("retry-after", String(Math.ceil(Number(resetAfter))));
          return json(res, 429, {
            message: "You are being rate limited.",
            retry_after: Number(resetAfter),
            global: false,
          });
        }
        limit.remaining -= 1;
        res.setHeader("x-ratelimit-remaining", String(limit.remaining));
      }
      const invalid = attachments?.length ? undefined : checkContent(body);
      if (invalid) return json(res, 400, invalid);
      const nonce = body.nonce !== undefined ? String(body.nonce) : undefined;
      if (nonce && nonce.length > 25)
        return json(res, 400, {
          message: "Invalid Form Body",
          code: 50035,
          errors: { nonce: "too long" },
        });
      if (nonce && body.enforce_nonce === true) {
        const existing = messages.find(
          (m) => m.channel_id === channelId && m.author.id === botId && m.nonce === nonce,
        );
        if (existing) return answer(200, publicMessage(existing));
      }
      const reference = body.message_reference as { message_id?: string } | undefined;
      const message: FakeMessage = {
        id: nextSnowflake(),
        channel_id: channelId,
        author: { id: botId, username: "edgeclaw", bot: true },
        content: String(body.content ?? ""),
        ...(nonce ? { nonce } : {}),
        ...(typeof body.flags === "number" ? { flags: body.flags } : {}),
        ...(reference?.message_id
          ? { message_reference: { message_id: reference.message_id } }
          : {}),
        ...(attachments?.length ? { attachments } : {}),
        edits: 0,
        at: Date.now(),
      };
      messages.push(message);
      return answer(200, publicMessage(message));
    }
    const target = messages.find(
      (m) => m.id === messageId && m.channel_id === channelId && !m.deleted,
    );
    if (!target) return json(res, 404, { message: "Unknown Message", code: 10008 });
    if (target.author.id !== botId)
      return json(res, 403, {
        message: "Cannot edit a message authored by another user",
        code: 50005,
      });
    if (method === "PATCH") {
      const invalid = checkContent(body);
      if (invalid) return json(res, 400, invalid);
      target.content = String(body.content);
      target.edits += 1;
      return answer(200, publicMessage(target));
    }
    if (method === "DELETE") {
      target.deleted = true;
      return script?.dropConnection ? void req.socket.destroy() : void res.writeHead(204).end();
    }
    return json(res, 405, { message: "405: Method Not Allowed", code: 0 });
  }

  function webhook(
    appId: string,
    token: string,
    which: string | undefined,
    method: string,
    body: Record<string, unknown>,
    res: ServerResponse,
    url: URL,
    drop: boolean,
    req: IncomingMessage,
  ) {
    if (token.endsWith("expired"))
      return json(res, 404, { message: "Unknown Webhook", code: 10015 });
    const key = `interaction:${appId}:${token.slice(-8)}`;
    if (method === "DELETE" && which === "@original") {
      // The deferral's "thinking…" message exists on Discord even though nothing here posted it.
      const original = messages.find((m) => m.interaction === key && m.id.startsWith("orig"));
      if (original?.deleted) return json(res, 404, { message: "Unknown Message", code: 10008 });
      if (original) original.deleted = true;
      else
        messages.push({
          id: `orig${nextSnowflake()}`,
          channel_id: "interaction",
          author: { id: appId, username: "edgeclaw", bot: true },
          content: "",
          interaction: key,
          edits: 0,
          deleted: true,
          at: Date.now(),
        });
      return drop ? void req.socket.destroy() : void res.writeHead(204).end();
    }
    const invalid = checkContent(body);
    if (invalid) return json(res, 400, invalid);
    let message: FakeMessage | undefined;
    if (method === "PATCH" && which === "@original") {
      message = messages.find((m) => m.interaction === key && m.id.startsWith("orig"));
      if (!message) {
        message = {
          id: `orig${nextSnowflake()}`,
          channel_id: "interaction",
          author: { id: appId, username: "edgeclaw", bot: true },
          content: "",
          interaction: key,
          edits: 0,
          at: Date.now(),
        };
        messages.push(message);
      }
      message.content = String(body.content);
      message.edits += 1;
    } else if (method === "POST" && !which) {
      message = {
        id: nextSnowflake(),
        channel_id: "interaction",
        author: { id: appId, username: "edgeclaw", bot: true },
        content: String(body.content),
        interaction: key,
        ...(typeof body.flags === "number" ? { flags: body.flags } : {}),
        edits: 0,
        at: Date.now(),
      };
      messages.push(message);
    } else return json(res, 405, { message: "405: Method Not Allowed", code: 0 });
    if (drop) return void req.socket.destroy();
    return url.searchParams.get("wait") === "false"
      ? void res.writeHead(204).end()
      : json(res, 200, publicMessage(message));
  }

  function control(url: URL, method: string, raw: string, res: ServerResponse) {
    const body = controlBody(raw);
    switch (`${method} ${url.pathname}`) {
      case "POST /_control/script":
        scripts.push({ times: 1, ...(body as Partial<Script>), route: String(body.route) });
        return json(res, 200, { ok: true });
      case "GET /_control/calls": {
        const route = url.searchParams.get("route");
        const channelId = url.searchParams.get("channel_id");
        return json(
          res,
          200,
          calls.filter(
            (c) => (!route || c.route === route) && (!channelId || c.channelId === channelId),
          ),
        );
      }
      case "GET /_control/messages": {
        const channelId = url.searchParams.get("channel_id");
        const interaction = url.searchParams.get("interaction");
        return json(
          res,
          200,
          messages.filter(
            (m) =>
              (!channelId || m.channel_id === channelId) &&
              (!interaction || m.interaction?.endsWith(interaction.slice(-8))),
          ),
        );
      }
      case "POST /_control/seed": {
        const at = Number(body.at ?? Date.now());
        snowflakeCounter = (snowflakeCounter + 1n) % 4096n;
        const id = String(
          ((BigInt(Math.floor(at)) - 1_420_070_400_000n) << 22n) | snowflakeCounter,
        );
        const author = { id: String(body.authorId), username: "edgeclaw", bot: true as const };
        messages.push({
          id,
          channel_id: String(body.channelId),
          author,
          content: String(body.content ?? ""),
          edits: 0,
          at,
        });
        return json(res, 200, { id });
      }
      case "POST /_control/file":
        files.set(String(body.path), {
          body: String(body.body ?? ""),
          ...(body.contentType ? { contentType: String(body.contentType) } : {}),
          ...(body.redirect ? { redirect: String(body.redirect) } : {}),
          ...(body.understateLength ? { understateLength: true } : {}),
        });
        return json(res, 200, { ok: true });
      case "GET /_control/downloads":
        return json(
          res,
          200,
          downloads.filter((d) => d.path === url.searchParams.get("path")),
        );
      case "POST /_control/ratelimit":
        limits.set(String(body.channelId), {
          limit: Number(body.limit),
          resetAfter: Number(body.resetAfter),
          remaining: 0,
          resetAt: 0,
          refused: 0,
        });
        return json(res, 200, { ok: true });
      case "GET /_control/ratelimit":
        return json(res, 200, limits.get(url.searchParams.get("channel_id") ?? "") ?? null);
      case "POST /_control/gateway":
        gatewayUrl = String(body.url);
        return json(res, 200, { ok: true });
      case "POST /_control/dispatch":
        if (!gateway.live)
          return json(res, 409, { error: "no Gateway session: no client has identified yet" });
        return json(res, 200, { s: gateway.dispatch(String(body.t), body.d) });
      case "POST /_control/reset":
        calls = [];
        messages = [];
        scripts = [];
        limits = new Map();
        files = new Map();
        downloads = [];
        return json(res, 200, { ok: true });
      default:
        return json(res, 404, { error: "unknown control endpoint" });
    }
  }

  const { url, stop } = await listenOnLoopback(server);
  gatewayUrl = `${url.replace(/^http/, "ws")}/gw`;
  return {
    url,
    stop: async () => {
      await gateway.close();
      await stop();
    },
  };
}

function checkContent(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const content = typeof body.content === "string" ? body.content : "";
  if (!content.trim()) return { message: "Cannot send an empty message", code: 50006 };
  if ([...content].length > 2000)
    return {
      message: "Invalid Form Body",
      code: 50035,
      errors: {
        content: {
          _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }],
        },
      },
    };
  return undefined;
}

function publicMessage(message: FakeMessage) {
  const {
    edits: _edits,
    at: _at,
    deleted: _deleted,
    interaction: _interaction,
    ...visible
  } = message;
  return visible;
}
