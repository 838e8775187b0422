import type { IncomingMessage, ServerResponse } from "node:http";
import { fakeServer, json } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { slackControl } from "./slack-control.ts";
import { receiveUpload, serveDownload, UPLOAD_PATH } from "./slack-files.ts";
import { applyMethod } from "./slack-methods.ts";
import { FakeSlackSocketMode } from "./slack-socket.ts";
import { SlackFakeState } from "./slack-state.ts";
import { formOrJsonArgs } from "../../../../scripts/simulate/fakes/form-args.ts";

/**
 * A fake Slack Web API on loopback, speaking Slack's wire format: `POST /api/<method>` with a
 * form-urlencoded (what @slack/web-api sends; nested values JSON-encoded) or JSON body and
 * `Authorization: Bearer <token>`; answers `{ ok: true, … }` / `{ ok: false, error }` with HTTP 200, and
 * HTTP 429 + `Retry-After` when rate limited. Also serves slash-command `response_url`s at
 * `POST /response/<id>`. File uploads as Slack's external upload: files.getUploadURLExternal gives
 * a URL on this server (`POST /upload/v1/<file id>`, raw bytes or multipart, the length must match),
 * files.completeUploadExternal shares the file in `channel_id` as a message with `files` (name,
 * size, SHA-256) and `blocks`, and refuses a file never uploaded or completed twice. Keeps the messages it was sent so conversations.history/replies can find them,
 * as Slack serves them: message `ts` from the wall clock (unique, ordered), `oldest`/`latest`/`inclusive`
 * bounds, `limit` (at most 999) and cursor pagination (`response_metadata.next_cursor`, `has_more`);
 * history newest first, replies oldest first; `metadata` only with `include_all_metadata`.
 *
 * Control endpoints (tests inside workerd call these by plain fetch):
 *   POST /_control/script   {method, channel?, times?, status?, retryAfter?, error?, dropConnection?}
 *        the next `times` (default 1) calls of `method` (for `channel` when given) fail: HTTP `status`
 *        (429 sends Retry-After: `retryAfter`, default 1), or `{ok:false,error}`; `dropConnection`
 *        applies the call and then destroys the socket (the caller cannot know it worked).
 *        (`method: "response_url"` scripts the slash-command response URLs the same way)
 *        `token` limits the script to calls made with that token; `delayMs` holds the answer that
 *        long first (a large value stands for a Slack that hangs); with no failure scripted the call
 *        is then applied and answered, even if the caller has gone meanwhile.
 *   POST /_control/file     {path, content? | contentBase64?, contentType?, redirectTo?, bytes?, contentLength?}   serve a url_private file
 *   POST /_control/flood    {channel, count, thread_ts?}         `count` messages from a human, as in a busy channel
 *   POST /_control/identity {token, user_id, bot_id, team_id}   what auth.test answers for a token
 *   GET  /_control/calls?method=&channel=                       recorded calls (token redacted to its last 4)
 *   GET  /_control/messages?channel=                            messages as stored (after edits/deletes)
 *   GET  /_control/count                                        {messages}: how many are stored and not deleted
 *   POST /_control/reset                                        forget calls, messages and scripts
 *   POST /_control/socket-envelope {envelope}   Socket Mode: send an envelope on the newest open connection
 *        (409 while none is open); `apps.connections.open` takes any `xapp-…` token but `xapp-invalid`
 *        and its WebSocket is served here too (slack-socket.ts), so one fake serves an app in either mode
 * Tokens: any `xoxb-…` works except `xoxb-invalid` (invalid_auth). Unknown methods → unknown_method.
 */

export interface FakeSlackApi {
  url: string;
  stop(): Promise<void>;
}

export async function startFakeSlackApi(): Promise<FakeSlackApi> {
  const state = new SlackFakeState();
  const server = fakeServer(handle);
  const socketMode = new FakeSlackSocketMode(
    (token) => token.startsWith("xapp-") && token !== "xapp-invalid",
    { server },
  );

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    body: string,
    raw: Buffer,
  ) {
    if (url.pathname.startsWith("/_control/"))
      return slackControl(state, socketMode, server, url, req.method ?? "GET", body, res);
    const uploadTo = UPLOAD_PATH.exec(url.pathname);
    if (uploadTo && req.method === "POST") return receiveUpload(state, req, res, uploadTo, raw);
    if (url.pathname.startsWith("/response/")) {
      state.calls.push({
        method: "response_url",
        args: { path: url.pathname, ...formOrJsonArgs(body, req.headers["content-type"]) },
        token: "",
        at: Date.now(),
      });
      const script = state.scripts.find((s) => s.method === "response_url" && s.times > 0);
      if (script) {
        script.times -= 1;
        // Slack took the reply; the caller never hears about it.
        if (script.dropConnection) return void req.socket.destroy();
        if (script.status === 429) res.setHeader("Retry-After", String(script.retryAfter ?? 1));
        return json(res, script.status ?? 500, { ok: false });
      }
      return json(res, 200, { ok: true });
    }
    if (url.pathname.startsWith("/files/")) return serveDownload(state, req, res, url);
    const match = /^\/api\/([\w.]+)$/.exec(url.pathname);
    if (!match || req.method !== "POST") return json(res, 404, { ok: false, error: "not_found" });
    const method = match[1]!;
    const args = formOrJsonArgs(body, req.headers["content-type"]);
    const auth = String(req.headers.authorization ?? "");
    const token = auth.startsWith("Bearer ")
      ? auth.slice(7)
      : typeof args.token === "string"
        ? args.token
        : "";
    delete args.token;
    state.calls.push({ method, args, token: token ? `…${token.slice(-4)}` : "", at: Date.now() });

    const channel = typeof args.channel === "string" ? args.channel : undefined;
    const script = state.scripts.find(
      (s) =>
        s.method === method &&
        (!s.channel || s.channel === channel) &&
        (!s.token || s.token === token) &&
        s.times > 0,
    );
    if (script) script.times -= 1;
    if (script?.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
    if (script && !script.dropConnection && (script.status || script.error || !script.delayMs)) {
      if (script.status === 429) {
        res.setHeader("Retry-After", String(script.retryAfter ?? 1));
        return json(res, 429, { ok: false, error: "ratelimited" });
      }
      if (script.status && script.status !== 200)
        return json(res, script.status, { ok: false, error: "server_error" });
      return json(res, 200, { ok: false, error: script.error ?? "internal_error" });
    }
    // Socket Mode's one Web API method, called with the app-level token (xapp-), not a bot token.
    if (method === "apps.connections.open")
      return json(res, 200, socketMode.open(req.headers.authorization));
    if (!token.startsWith("xox") || token === "xoxb-invalid")
      return json(res, 200, { ok: false, error: token ? "invalid_auth" : "not_authed" });

    const result = applyMethod(
      state,
      method,
      args,
      token,
      `http://${req.headers.host ?? "127.0.0.1"}`,
    );
    if (script?.dropConnection) {
      // The call took effect; the caller never hears about it.
      req.socket.destroy();
      return;
    }
    return json(res, 200, result);
  }

  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    stop: async () => {
      await socketMode.close();
      await listening.stop();
    },
  };
}
