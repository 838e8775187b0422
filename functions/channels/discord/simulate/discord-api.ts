import type { IncomingMessage, ServerResponse } from "node:http";
import { fakeServer, json } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { channelMessages } from "./discord-channel-messages.ts";
import { discordControl } from "./discord-control.ts";
import { FakeDiscordGateway } from "./discord-gateway.ts";
import { readBody } from "./discord-payloads.ts";
import { botIdOfToken, type FakeAttachment } from "./discord-records.ts";
import { DiscordFakeState } from "./discord-state.ts";
import { interactionWebhook } from "./discord-webhooks.ts";

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

export async function startFakeDiscordApi(): Promise<FakeDiscordApi> {
  const state = new DiscordFakeState();
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
    if (url.pathname.startsWith("/_control/"))
      return discordControl(state, gateway, url, req.method ?? "GET", raw, res);
    if (url.pathname.startsWith("/attachments/")) {
      // The CDN: attachment URLs are signed in their query and need no Authorization header.
      state.downloads.push({
        path: url.pathname,
        authorization: req.headers.authorization ?? null,
      });
      const file = state.files.get(url.pathname);
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
    let body: Record<string, unknown>;
    let attachments: FakeAttachment[] | undefined;
    try {
      ({ body, attachments } = await readBody(req.headers["content-type"], raw, bytes));
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
    state.calls.push({
      route,
      method,
      path,
      ...(channel ? { channelId: channel[1] } : {}),
      body,
      ...(token ? { token: `…${token.slice(-4)}` } : {}),
      at: Date.now(),
    });

    const script = state.scripts.find(
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
        url: state.gatewayUrl,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
      });
    }
    if (hook)
      return interactionWebhook(
        state,
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
    return channelMessages(state, req, res, url, method, body, attachments, channel, botId, script);
  }

  const { url, stop } = await listenOnLoopback(server);
  state.gatewayUrl = `${url.replace(/^http/, "ws")}/gw`;
  return {
    url,
    stop: async () => {
      await gateway.close();
      await stop();
    },
  };
}
