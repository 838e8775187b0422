import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { fakeServer } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import {
  type FetchedMedia,
  fetchLikePlatform,
} from "../../../../scripts/simulate/fakes/fetch-media.ts";

/**
 * A fake Twilio REST API on loopback, speaking Twilio's wire formats (api.twilio.com/2010-04-01):
 *   POST /2010-04-01/Accounts/{Sid}/Messages.json   form To, From | MessagingServiceSid, Body, MediaUrl, StatusCallback
 *        → 201 Message JSON (sid SM…, status "queued", date_created RFC 2822, date_sent null until "sent");
 *        each MediaUrl (at most 10) must be http(s), and is then fetched (HEAD, then GET) as Twilio
 *        does; what came back is on the message as `media_fetched` (GET /_control/messages)
 *   GET  /2010-04-01/Accounts/{Sid}/Messages.json   filters To, From, DateSent / DateSent< / DateSent> (dates, UTC);
 *        PageSize (default 50, max 1000), Page + PageToken; newest first; `next_page_uri` while more remain
 *   GET  /2010-04-01/Accounts/{Sid}/Messages/{SM}.json   one message
 *   GET  /2010-04-01/Accounts/{Sid}/Messages/{MM}/Media/{ME}   MMS media: Basic auth required (the account's
 *        "enforce HTTP auth on media URLs" setting), then 307 to `/storage/{ME}` (served without auth, as
 *        Twilio's pre-signed storage URLs are; an Authorization header arriving there is recorded)
 * Every API call needs HTTP Basic `AccountSid:AuthToken` for a registered account (else 401, code 20003).
 * Errors are Twilio's JSON `{ code, message, more_info, status }`.
 *
 * Control endpoints (tests inside workerd call these by plain fetch):
 *   POST /_control/account  {accountSid, authToken}            register an account
 *   POST /_control/script   {method: "messages.create"|"messages.list"|"media", to?, times?, status?, code?,
 *                            retryAfter?, dropConnection?, delayMs?}   the next `times` calls fail as told;
 *        `dropConnection` creates the message and then destroys the socket (the caller cannot know it worked)
 *   POST /_control/media    {accountSid, content?, contentType?, bytes?, contentLength?}   → {url} a MediaUrl
 *   POST /_control/seed     {accountSid, to, from, body, ageMs?}   a message sent earlier (someone else's history)
 *   GET  /_control/calls?method=&to=    recorded calls (token redacted to its last 4)
 *   GET  /_control/messages?to=         messages created through the API, oldest first
 *   POST /_control/reset                forget calls, messages, media and scripts (accounts stay)
 */

export interface FakeTwilioApi {
  url: string;
  stop(): Promise<void>;
}

interface Script {
  method: string;
  to?: string;
  times: number;
  status?: number;
  code?: number;
  retryAfter?: number;
  dropConnection?: boolean;
  delayMs?: number;
}

interface StoredMessage {
  sid: string;
  account_sid: string;
  to: string;
  from: string | null;
  messaging_service_sid: string | null;
  body: string;
  status: string;
  direction: string;
  created: number;
  sent: number | null;
  seq: number;
  num_media: string;
  status_callback?: string;
  media_urls?: string[];
  media_fetched?: FetchedMedia[];
}

interface RecordedCall {
  method: string;
  accountSid: string;
  args: Record<string, string | string[]>;
  auth: string;
  at: number;
}

interface Media {
  accountSid: string;
  content: string;
  contentType: string;
  bytes?: number;
  contentLength?: number;
}

const API = "/2010-04-01";

export async function startFakeTwilioApi(
  options: { accounts?: Record<string, string> } = {},
): Promise<FakeTwilioApi> {
  const accounts = new Map(Object.entries(options.accounts ?? {}));
  let calls: RecordedCall[] = [];
  let messages: StoredMessage[] = [];
  let scripts: Script[] = [];
  let media = new Map<string, Media>();
  let seq = 0;

  const server = fakeServer(handle);

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL, body: string) {
    if (url.pathname.startsWith("/_control/")) return control(url, req.method ?? "GET", body, res);
    if (url.pathname.startsWith("/storage/")) {
      const id = url.pathname.slice("/storage/".length);
      calls.push({
        method: "storage",
        accountSid: media.get(id)?.accountSid ?? "",
        args: { id, authorization: req.headers.authorization ? "present" : "absent" },
        auth: "",
        at: Date.now(),
      });
      const item = media.get(id);
      if (!item) return twilioError(res, 404, 20404, "The requested resource was not found");
      if (item.bytes !== undefined) return streamBytes(res, item);
      res.writeHead(200, { "content-type": item.contentType });
      return res.end(item.content);
    }

    const match = new RegExp(
      `^${API}/Accounts/([^/]+)/Messages(?:/([^/]+?))?(?:/Media/([^/]+?))?(\\.json)?$`,
    ).exec(url.pathname);
    if (!match) return twilioError(res, 404, 20404, "The requested resource was not found");
    const [, accountSid = "", messageSid, mediaSid, json] = match;
    const method = mediaSid
      ? "media"
      : req.method === "POST" && !messageSid
        ? "messages.create"
        : messageSid
          ? "messages.fetch"
          : "messages.list";
    const form = req.method === "POST" ? new URLSearchParams(body) : url.searchParams;
    const args: Record<string, string | string[]> = {};
    for (const [key, value] of form) {
      const prior = args[key];
      args[key] =
        prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
    }
    if (mediaSid) args.MediaSid = mediaSid;
    const token = basicPassword(req.headers.authorization, accountSid);
    calls.push({
      method,
      accountSid,
      args,
      auth: token ? `…${token.slice(-4)}` : "",
      at: Date.now(),
    });

    const to = typeof args.To === "string" ? args.To : undefined;
    const script = scripts.find(
      (s) => s.method === method && (!s.to || s.to === to) && s.times > 0,
    );
    if (script) script.times -= 1;
    if (script?.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
    if (script && !script.dropConnection && script.status) {
      if (script.status === 429) {
        if (script.retryAfter !== undefined)
          res.setHeader("Retry-After", String(script.retryAfter));
        return twilioError(res, 429, script.code ?? 20429, "Too Many Requests");
      }
      return twilioError(
        res,
        script.status,
        script.code ?? 20500,
        "An internal server error has occurred",
      );
    }

    if (!token || accounts.get(accountSid) !== token)
      return twilioError(res, 401, 20003, "Authenticate");

    if (method === "media") {
      const item = media.get(mediaSid!);
      if (!item || item.accountSid !== accountSid)
        return twilioError(res, 404, 20404, "The requested resource was not found");
      res.writeHead(307, { location: `/storage/${mediaSid}` });
      return res.end();
    }
    if (!json) return twilioError(res, 404, 20404, "The requested resource was not found");
    if (method === "messages.fetch") {
      const found = messages.find((m) => m.sid === messageSid && m.account_sid === accountSid);
      return found
        ? send(res, 200, present(found))
        : twilioError(res, 404, 20404, "The requested resource was not found");
    }
    if (method === "messages.list") return send(res, 200, listPage(accountSid, url));

    const result = create(accountSid, form);
    if ("error" in result) return twilioError(res, 400, result.code, result.error);
    if (script?.dropConnection) return void req.socket.destroy();
    return send(res, 201, present(result.message));
  }

  function create(
    accountSid: string,
    form: URLSearchParams,
  ): { message: StoredMessage } | { error: string; code: number } {
    const to = form.get("To");
    const from = form.get("From");
    const service = form.get("MessagingServiceSid");
    const text = form.get("Body") ?? "";
    const mediaUrls = form.getAll("MediaUrl");
    if (!to) return { error: "A 'To' phone number is required.", code: 21604 };
    if (!from && !service) return { error: "A 'From' phone number is required.", code: 21603 };
    if (!text && mediaUrls.length === 0)
      return { error: "A text message body or media urls must be specified.", code: 21602 };
    if (text.length > 1600) return { error: "Message body is too long", code: 21617 };
    if (mediaUrls.length > 10 || mediaUrls.some((u) => !/^https?:\/\//.test(u)))
      return { error: "The MediaUrl is invalid", code: 21620 };
    const message: StoredMessage = {
      sid: `SM${randomBytes(16).toString("hex")}`,
      account_sid: accountSid,
      to,
      from,
      messaging_service_sid: service,
      body: text,
      status: service && !from ? "accepted" : "queued",
      direction: "outbound-api",
      created: Date.now(),
      sent: null,
      seq: ++seq,
      num_media: String(mediaUrls.length),
      ...(form.get("StatusCallback") ? { status_callback: form.get("StatusCallback")! } : {}),
    };
    messages.push(message);
    if (mediaUrls.length) {
      message.media_urls = mediaUrls;
      message.media_fetched = [];
      for (const mediaUrl of mediaUrls)
        void fetchLikePlatform(mediaUrl, { head: true }).then((f) =>
          message.media_fetched!.push(f),
        );
    }
    // A moment later the carrier has it: "sent", with a date_sent.
    setTimeout(() => {
      message.status = "sent";
      message.sent = Date.now();
    }, 200).unref();
    return { message };
  }

  function listPage(accountSid: string, url: URL) {
    const q = url.searchParams;
    const day = (value: string) => Date.parse(`${value.slice(0, 10)}T00:00:00Z`);
    const matching = messages
      .filter((m) => m.account_sid === accountSid)
      .filter((m) => !q.get("To") || m.to === q.get("To"))
      .filter((m) => !q.get("From") || m.from === q.get("From"))
      .filter(
        (m) =>
          !q.get("DateSent") ||
          (m.sent !== null &&
            m.sent >= day(q.get("DateSent")!) &&
            m.sent < day(q.get("DateSent")!) + 86_400_000),
      )
      .filter((m) => !q.get("DateSent>") || (m.sent !== null && m.sent >= day(q.get("DateSent>")!)))
      .filter(
        (m) =>
          !q.get("DateSent<") ||
          (m.sent !== null && m.sent < day(q.get("DateSent<")!) + 86_400_000),
      )
      .sort((a, b) => b.created - a.created || b.seq - a.seq);
    const pageSize = Math.min(1000, Math.max(1, Number(q.get("PageSize") ?? 50) || 50));
    const page = Number(q.get("Page") ?? 0) || 0;
    const offset = Number((q.get("PageToken") ?? "PT0").slice(2)) || 0;
    const slice = matching.slice(offset, offset + pageSize);
    const base = `${API}/Accounts/${accountSid}/Messages.json`;
    const query = (extra: Record<string, string>) => {
      const next = new URLSearchParams(q);
      for (const [key, value] of Object.entries(extra)) next.set(key, value);
      return `${base}?${next.toString()}`;
    };
    return {
      messages: slice.map(present),
      end: offset + slice.length - 1,
      first_page_uri: query({ Page: "0", PageSize: String(pageSize) }),
      next_page_uri:
        offset + pageSize < matching.length
          ? query({
              Page: String(page + 1),
              PageSize: String(pageSize),
              PageToken: `PT${offset + pageSize}`,
            })
          : null,
      page,
      page_size: pageSize,
      previous_page_uri:
        page > 0
          ? query({
              Page: String(page - 1),
              PageSize: String(pageSize),
              PageToken: `PT${Math.max(0, offset - pageSize)}`,
            })
          : null,
      start: offset,
      uri: `${url.pathname}${url.search}`,
    };
  }

  function control(url: URL, method: string, body: string, res: ServerResponse) {
    const path = url.pathname.slice("/_control/".length);
    const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    if (path === "reset" && method === "POST") {
      calls = [];
      messages = [];
      scripts = [];
      media = new Map();
      return send(res, 200, { ok: true });
    }
    if (path === "account" && method === "POST") {
      const { accountSid, authToken } = JSON.parse(body) as {
        accountSid: string;
        authToken: string;
      };
      accounts.set(accountSid, authToken);
      return send(res, 200, { ok: true });
    }
    if (path === "script" && method === "POST") {
      scripts.push({ times: 1, ...(JSON.parse(body) as Partial<Script> & { method: string }) });
      return send(res, 200, { ok: true });
    }
    if (path === "media" && method === "POST") {
      const item = JSON.parse(body) as Partial<Media> & { accountSid: string };
      const id = `ME${randomBytes(16).toString("hex")}`;
      const messageSid = `MM${randomBytes(16).toString("hex")}`;
      media.set(id, { content: "", contentType: "text/plain", ...item });
      return send(res, 200, {
        url: `${origin}${API}/Accounts/${item.accountSid}/Messages/${messageSid}/Media/${id}`,
        messageSid,
      });
    }
    if (path === "seed" && method === "POST") {
      const seedMessage = JSON.parse(body) as {
        accountSid: string;
        to: string;
        from: string;
        body: string;
        ageMs?: number;
      };
      const created = Date.now() - (seedMessage.ageMs ?? 0);
      messages.push({
        sid: `SM${randomBytes(16).toString("hex")}`,
        account_sid: seedMessage.accountSid,
        to: seedMessage.to,
        from: seedMessage.from,
        messaging_service_sid: null,
        body: seedMessage.body,
        status: "delivered",
        direction: "outbound-api",
        created,
        sent: created,
        seq: ++seq,
        num_media: "0",
      });
      return send(res, 200, { ok: true });
    }
    const to = url.searchParams.get("to");
    if (path === "calls") {
      const only = url.searchParams.get("method");
      return send(
        res,
        200,
        calls.filter((c) => (!only || c.method === only) && (!to || c.args.To === to)),
      );
    }
    if (path === "messages")
      return send(
        res,
        200,
        messages
          .filter((m) => !to || m.to === to)
          .sort((a, b) => a.seq - b.seq)
          .map((m) => ({
            ...present(m),
            media_urls: m.media_urls,
            media_fetched: m.media_fetched,
          })),
      );
    return send(res, 404, { error: "unknown control endpoint" });
  }

  return listenOnLoopback(server);
}

/** A Message resource as Twilio renders it. */
function present(m: StoredMessage) {
  const rfc2822 = (ms: number) => new Date(ms).toUTCString().replace("GMT", "+0000");
  const uri = `${API}/Accounts/${m.account_sid}/Messages/${m.sid}.json`;
  return {
    account_sid: m.account_sid,
    api_version: "2010-04-01",
    body: m.body,
    date_created: rfc2822(m.created),
    date_sent: m.sent === null ? null : rfc2822(m.sent),
    date_updated: rfc2822(m.sent ?? m.created),
    direction: m.direction,
    error_code: null,
    error_message: null,
    from: m.from,
    messaging_service_sid: m.messaging_service_sid,
    num_media: m.num_media,
    num_segments: String(Math.max(1, Math.ceil(m.body.length / 153))),
    price: null,
    price_unit: "USD",
    sid: m.sid,
    status: m.status,
    subresource_uris: { media: uri.replace(/\.json$/, "/Media.json") },
    to: m.to,
    uri,
  };
}

/** The password of a Basic credential whose user is `accountSid`, else undefined. */
function basicPassword(header: string | undefined, accountSid: string): string | undefined {
  if (!header?.startsWith("Basic ")) return undefined;
  const decoded = Buffer.from(header.slice(6), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon === -1 || decoded.slice(0, colon) !== accountSid) return undefined;
  return decoded.slice(colon + 1);
}

async function streamBytes(res: ServerResponse, item: Media): Promise<void> {
  res.writeHead(200, {
    "content-type": item.contentType,
    connection: "close",
    ...(item.contentLength !== undefined ? { "content-length": String(item.contentLength) } : {}),
  });
  const chunk = Buffer.alloc(64 * 1024, item.content || "x");
  let sent = 0;
  let closed = false;
  res.on("close", () => (closed = true));
  while (sent < item.bytes! && !closed) {
    const piece = chunk.subarray(0, Math.min(chunk.length, item.bytes! - sent));
    sent += piece.length;
    if (!res.write(piece))
      await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
  }
  if (!closed) res.end();
}

function twilioError(res: ServerResponse, status: number, code: number, message: string) {
  send(res, status, {
    code,
    message,
    more_info: `https://www.twilio.com/docs/errors/${code}`,
    status,
  });
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify(body));
}
