import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createHash } from "node:crypto";
import { fakeServer, json, parseMultipart } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { FakeSlackSocketMode } from "./slack-socket.ts";

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

interface Script {
  method: string;
  channel?: string;
  times: number;
  status?: number;
  retryAfter?: number;
  error?: string;
  dropConnection?: boolean;
  token?: string;
  /** Hold the call this long first (then fail as scripted, or apply it and answer normally). */
  delayMs?: number;
}

interface StoredMessage {
  channel: string;
  ts: string;
  text: string;
  thread_ts?: string;
  user: string;
  bot_id: string;
  metadata?: unknown;
  streaming?: boolean;
  deleted?: boolean;
  blocks?: unknown;
  /** Files shared by files.completeUploadExternal (bytes kept as size and SHA-256). */
  files?: Array<{ id: string; name: string; title: string; size: number; sha256: string }>;
}

interface RecordedCall {
  method: string;
  args: Record<string, unknown>;
  token: string;
  at: number;
}

const DEFAULT_IDENTITY = { user_id: "UBOTTEST", bot_id: "BBOTTEST", team_id: "TTEST" };

export async function startFakeSlackApi(): Promise<FakeSlackApi> {
  let calls: RecordedCall[] = [];
  let messages: StoredMessage[] = [];
  /** files.getUploadURLExternal's uploads by file id, until completeUploadExternal shares them. */
  const uploads = new Map<
    string,
    { filename: string; length: number; sha256?: string; completed?: boolean }
  >();
  let fileSeq = 0;
  let scripts: Script[] = [];
  const identities = new Map<string, typeof DEFAULT_IDENTITY>();
  /** Files served at /files/… to url_private downloads (path → body). */
  const files = new Map<string, ServedFile>();
  let clock = 0; // microseconds of wall-clock time, bumped so every ts is unique and ordered

  const nextTs = () => {
    clock = Math.max(clock + 1, Date.now() * 1000);
    return `${Math.floor(clock / 1_000_000)}.${String(clock % 1_000_000).padStart(6, "0")}`;
  };

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
    if (url.pathname.startsWith("/_control/")) return control(url, req.method ?? "GET", body, res);
    const uploadTo = /^\/upload\/v1\/(F\w+)$/.exec(url.pathname);
    if (uploadTo && req.method === "POST") {
      // The pre-signed URL files.getUploadURLExternal gave: raw bytes or a multipart `file`; no token.
      const pending = uploads.get(uploadTo[1]!);
      const form = await parseMultipart(req.headers["content-type"], raw);
      const bytes = form ? form.files[0]?.bytes : raw;
      calls.push({
        method: "files.upload_url",
        args: { fileId: uploadTo[1], bytes: bytes?.byteLength ?? 0 },
        token: req.headers.authorization ? "sent" : "",
        at: Date.now(),
      });
      if (!pending || !bytes) return json(res, 404, { ok: false, error: "invalid_upload" });
      if (bytes.byteLength !== pending.length) {
        res.writeHead(400, { "content-type": "text/plain" });
        return res.end("length mismatch");
      }
      pending.sha256 = createHash("sha256").update(bytes).digest("hex");
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end(`OK - ${bytes.byteLength}`);
    }
    if (url.pathname.startsWith("/response/")) {
      calls.push({
        method: "response_url",
        args: { path: url.pathname, ...parseArgs(body, req.headers["content-type"]) },
        token: "",
        at: Date.now(),
      });
      const script = scripts.find((s) => s.method === "response_url" && s.times > 0);
      if (script) {
        script.times -= 1;
        // Slack took the reply; the caller never hears about it.
        if (script.dropConnection) return void req.socket.destroy();
        if (script.status === 429) res.setHeader("Retry-After", String(script.retryAfter ?? 1));
        return json(res, script.status ?? 500, { ok: false });
      }
      return json(res, 200, { ok: true });
    }
    if (url.pathname.startsWith("/files/")) {
      // url_private downloads: Bearer bot token required; without it Slack serves its sign-in page.
      const auth = String(req.headers.authorization ?? "");
      calls.push({
        method: "files.download",
        args: { path: url.pathname },
        token: auth ? `…${auth.slice(-4)}` : "",
        at: Date.now(),
      });
      const file = files.get(url.pathname);
      if (!auth.startsWith("Bearer xox")) {
        res.writeHead(200, { "content-type": "text/html" });
        return res.end("<html>Sign in to Slack</html>");
      }
      if (!file) return json(res, 404, { ok: false, error: "file_not_found" });
      if (file.redirectTo) {
        res.writeHead(302, { location: file.redirectTo });
        return res.end();
      }
      if (file.bytes !== undefined) return streamFile(res, file, calls[calls.length - 1]!);
      res.writeHead(200, { "content-type": file.contentType });
      return res.end(
        file.contentBase64 !== undefined ? Buffer.from(file.contentBase64, "base64") : file.content,
      );
    }
    const match = /^\/api\/([\w.]+)$/.exec(url.pathname);
    if (!match || req.method !== "POST") return json(res, 404, { ok: false, error: "not_found" });
    const method = match[1]!;
    const args = parseArgs(body, req.headers["content-type"]);
    const auth = String(req.headers.authorization ?? "");
    const token = auth.startsWith("Bearer ")
      ? auth.slice(7)
      : typeof args.token === "string"
        ? args.token
        : "";
    delete args.token;
    calls.push({ method, args, token: token ? `…${token.slice(-4)}` : "", at: Date.now() });

    const channel = typeof args.channel === "string" ? args.channel : undefined;
    const script = scripts.find(
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

    const result = apply(method, args, token, `http://${req.headers.host ?? "127.0.0.1"}`);
    if (script?.dropConnection) {
      // The call took effect; the caller never hears about it.
      req.socket.destroy();
      return;
    }
    return json(res, 200, result);
  }

  function apply(
    method: string,
    args: Record<string, unknown>,
    token: string,
    origin: string,
  ): Record<string, unknown> {
    const identity = identities.get(token) ?? DEFAULT_IDENTITY;
    const str = (key: string) =>
      typeof args[key] === "string" ? (args[key] as string) : undefined;
    switch (method) {
      case "auth.test":
        return {
          ok: true,
          url: "https://fake.slack.test/",
          team: "Fake",
          user: "edgeclaw",
          ...identity,
        };
      case "chat.postMessage":
      case "chat.startStream": {
        const channel = str("channel");
        if (!channel) return { ok: false, error: "channel_not_found" };
        if (method === "chat.startStream" && !str("thread_ts"))
          return { ok: false, error: "invalid_arguments" };
        const text = str("text") ?? str("markdown_text") ?? "";
        if (method === "chat.postMessage" && !text && !args.blocks)
          return { ok: false, error: "no_text" };
        const message: StoredMessage = {
          channel,
          ts: nextTs(),
          text,
          thread_ts: str("thread_ts"),
          user: identity.user_id,
          bot_id: identity.bot_id,
          metadata: args.metadata,
          streaming: method === "chat.startStream",
        };
        messages.push(message);
        return {
          ok: true,
          channel,
          ts: message.ts,
          message: {
            type: "message",
            text,
            user: message.user,
            bot_id: message.bot_id,
            ts: message.ts,
          },
        };
      }
      case "chat.appendStream":
      case "chat.stopStream":
      case "chat.update":
      case "chat.delete": {
        const found = messages.find(
          (m) => m.channel === str("channel") && m.ts === str("ts") && !m.deleted,
        );
        if (!found) return { ok: false, error: "message_not_found" };
        if (method === "chat.appendStream") {
          if (!found.streaming) return { ok: false, error: "message_not_in_streaming_state" };
          found.text += str("markdown_text") ?? "";
        } else if (method === "chat.stopStream") {
          if (!found.streaming) return { ok: false, error: "message_not_in_streaming_state" };
          found.text += str("markdown_text") ?? "";
          found.streaming = false;
        } else if (method === "chat.update") {
          found.text = str("text") ?? str("markdown_text") ?? found.text;
        } else {
          found.deleted = true;
        }
        return { ok: true, channel: found.channel, ts: found.ts };
      }
      case "conversations.history":
      case "conversations.replies": {
        const channel = str("channel");
        const thread = str("ts");
        if (method === "conversations.replies" && !thread)
          return { ok: false, error: "thread_not_found" };
        const inclusive = String(args.inclusive) === "true" || args.inclusive === "1";
        const oldest = str("oldest") ?? String(args.oldest ?? "0");
        const latest =
          str("latest") ?? (args.latest !== undefined ? String(args.latest) : undefined);
        const after = (ts: string) =>
          inclusive ? compareTs(ts, oldest) >= 0 : compareTs(ts, oldest) > 0;
        const before = (ts: string) =>
          latest === undefined ||
          (inclusive ? compareTs(ts, latest) <= 0 : compareTs(ts, latest) < 0);
        const newestFirst = method === "conversations.history";
        const matching = messages
          .filter((m) => m.channel === channel && !m.deleted)
          .filter((m) =>
            method === "conversations.replies"
              ? m.thread_ts === thread || m.ts === thread
              : !m.thread_ts,
          )
          .filter((m) => after(m.ts) && before(m.ts))
          .sort((a, b) => compareTs(a.ts, b.ts) * (newestFirst ? -1 : 1));
        const limit = Math.min(999, Math.max(1, Number(args.limit ?? 100) || 100));
        const offset =
          typeof args.cursor === "string" && args.cursor
            ? Number(
                Buffer.from(args.cursor, "base64")
                  .toString()
                  .replace(/^offset:/, ""),
              )
            : 0;
        const page = matching.slice(offset, offset + limit).map((m) => ({
          type: "message",
          user: m.user,
          bot_id: m.bot_id,
          text: m.text,
          ts: m.ts,
          thread_ts: m.thread_ts,
          ...(m.blocks ? { blocks: m.blocks } : {}),
          ...(m.files ? { files: m.files } : {}),
          ...(String(args.include_all_metadata) === "true" && m.metadata
            ? { metadata: m.metadata }
            : {}),
        }));
        const more = offset + limit < matching.length;
        return {
          ok: true,
          messages: page,
          has_more: more,
          response_metadata: {
            next_cursor: more ? Buffer.from(`offset:${offset + limit}`).toString("base64") : "",
          },
        };
      }
      case "files.getUploadURLExternal": {
        const filename = str("filename");
        const length = Number(args.length);
        if (!filename || !Number.isSafeInteger(length) || length <= 0)
          return { ok: false, error: "invalid_arguments" };
        const fileId = `F${String(++fileSeq).padStart(8, "0")}`;
        uploads.set(fileId, { filename, length });
        return { ok: true, upload_url: `${origin}/upload/v1/${fileId}`, file_id: fileId };
      }
      case "files.completeUploadExternal": {
        const list = (typeof args.files === "string" ? safeJson(args.files) : args.files) as
          | Array<{ id?: string; title?: string }>
          | undefined;
        if (!Array.isArray(list) || !list.length) return { ok: false, error: "invalid_arguments" };
        const shared: NonNullable<StoredMessage["files"]> = [];
        for (const entry of list) {
          const pending = entry.id ? uploads.get(entry.id) : undefined;
          // Slack refuses to complete a file whose bytes never reached the upload URL, or twice.
          if (!pending?.sha256 || pending.completed) return { ok: false, error: "file_not_found" };
          pending.completed = true;
          shared.push({
            id: entry.id!,
            name: pending.filename,
            title: entry.title ?? pending.filename,
            size: pending.length,
            sha256: pending.sha256,
          });
        }
        const channel = str("channel_id");
        if (channel) {
          messages.push({
            channel,
            ts: nextTs(),
            text: str("initial_comment") ?? "",
            thread_ts: str("thread_ts"),
            user: identity.user_id,
            bot_id: identity.bot_id,
            blocks: str("initial_comment") ? undefined : args.blocks,
            files: shared,
          });
        }
        return { ok: true, files: shared.map((f) => ({ id: f.id, title: f.title })) };
      }
      case "reactions.add":
      case "reactions.remove":
      case "assistant.threads.setStatus":
        return { ok: true };
      default:
        return { ok: false, error: "unknown_method" };
    }
  }

  function control(url: URL, method: string, body: string, res: ServerResponse) {
    const path = url.pathname.slice("/_control/".length);
    if (path === "reset" && method === "POST") {
      calls = [];
      messages = [];
      scripts = [];
      identities.clear();
      return json(res, 200, { ok: true });
    }
    if (path === "socket-envelope" && method === "POST") {
      const live = socketMode.live;
      if (!live) return json(res, 409, { ok: false, error: "no Socket Mode connection is open" });
      socketMode.send(live, (JSON.parse(body) as { envelope: unknown }).envelope);
      return json(res, 200, { ok: true });
    }
    if (path === "script" && method === "POST") {
      const script = JSON.parse(body) as Partial<Script> & { method: string };
      scripts.push({ times: 1, ...script });
      return json(res, 200, { ok: true });
    }
    if (path === "flood" && method === "POST") {
      const flood = JSON.parse(body) as { channel: string; count: number; thread_ts?: string };
      for (let i = 0; i < flood.count; i++) {
        messages.push({
          channel: flood.channel,
          ts: nextTs(),
          text: `chatter ${i}`,
          thread_ts: flood.thread_ts,
          user: "UCHATTY",
          bot_id: "",
        });
      }
      return json(res, 200, { ok: true });
    }
    if (path === "file" && method === "POST") {
      const file = JSON.parse(body) as {
        path: string;
        content?: string;
        contentBase64?: string;
        contentType?: string;
        redirectTo?: string;
        bytes?: number;
        contentLength?: number;
      };
      files.set(file.path, {
        ...file,
        content: file.content ?? "",
        contentType: file.contentType ?? "text/plain",
      });
      return json(res, 200, {
        ok: true,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${file.path}`,
      });
    }
    if (path === "identity" && method === "POST") {
      const { token, ...identity } = JSON.parse(body) as {
        token: string;
      } & typeof DEFAULT_IDENTITY;
      identities.set(token, { ...DEFAULT_IDENTITY, ...identity });
      return json(res, 200, { ok: true });
    }
    const channel = url.searchParams.get("channel");
    if (path === "calls") {
      const only = url.searchParams.get("method");
      return json(
        res,
        200,
        calls.filter(
          (c) => (!only || c.method === only) && (!channel || c.args.channel === channel),
        ),
      );
    }
    if (path === "count")
      return json(res, 200, { messages: messages.filter((m) => !m.deleted).length });
    if (path === "messages")
      return json(
        res,
        200,
        messages.filter((m) => !channel || m.channel === channel),
      );
    return json(res, 404, { error: "unknown control endpoint" });
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

/** What `/_control/file` serves at a path; see streamFile for `bytes` / `contentLength`. */
interface ServedFile {
  content: string;
  /** Binary content (an image, a voice note), served instead of `content`. */
  contentBase64?: string;
  contentType: string;
  /** Answer 302 to this URL instead (Slack's file links redirect between its hosts). */
  redirectTo?: string;
  /** Serve this many bytes (`content` repeated), written as the client reads them. */
  bytes?: number;
  /** The Content-Length header to send with `bytes` (may lie); none (chunked) when unset. */
  contentLength?: number;
}

/**
 * Writes `file.bytes` bytes with backpressure and records in the download's call how many left
 * (`args.sentBytes`), so a test can tell a client that stopped reading from one that read it all.
 */
async function streamFile(
  res: ServerResponse,
  file: ServedFile,
  call: RecordedCall,
): Promise<void> {
  res.writeHead(200, {
    "content-type": file.contentType,
    connection: "close",
    ...(file.contentLength !== undefined ? { "content-length": String(file.contentLength) } : {}),
  });
  const chunk = Buffer.alloc(64 * 1024, file.content || "x");
  let sent = 0;
  let closed = false;
  res.on("close", () => (closed = true));
  while (sent < file.bytes! && !closed) {
    const piece = chunk.subarray(0, Math.min(chunk.length, file.bytes! - sent));
    sent += piece.length;
    call.args.sentBytes = sent;
    if (!res.write(piece))
      await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
  }
  if (!closed) res.end();
}

function parseArgs(body: string, contentType: string | undefined): Record<string, unknown> {
  if (!body) return {};
  if ((contentType ?? "").includes("application/json"))
    return JSON.parse(body) as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    // @slack/web-api JSON-encodes nested values (metadata, blocks) inside the form.
    args[key] = /^[[{]/.test(value) ? safeJson(value) : value;
  }
  return args;
}

/** Slack timestamps ("seconds.micros") compared as numbers of microseconds. */
function compareTs(a: string, b: string): number {
  const micros = (ts: string) => {
    const [seconds = "0", fraction = ""] = ts.split(".");
    return BigInt(seconds) * 1_000_000n + BigInt(`${fraction}000000`.slice(0, 6));
  };
  const diff = micros(a) - micros(b);
  return diff === 0n ? 0 : diff < 0n ? -1 : 1;
}

function safeJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
