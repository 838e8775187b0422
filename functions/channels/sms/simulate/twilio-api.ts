import type { IncomingMessage, ServerResponse } from "node:http";
import { fakeServer } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { twilioControl } from "./twilio-control.ts";
import { createMessage, listPage } from "./twilio-messages.ts";
import { API } from "./twilio-records.ts";
import { TwilioFakeState } from "./twilio-state.ts";
import { streamBytes } from "../../../../scripts/simulate/fakes/stream-bytes.ts";
import { basicPassword, present, send, twilioError } from "./twilio-wire.ts";

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

export async function startFakeTwilioApi(
  options: { accounts?: Record<string, string> } = {},
): Promise<FakeTwilioApi> {
  const state = new TwilioFakeState(options.accounts ?? {});
  const server = fakeServer(handle);

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL, body: string) {
    if (url.pathname.startsWith("/_control/"))
      return twilioControl(state, server, url, req.method ?? "GET", body, res);
    if (url.pathname.startsWith("/storage/")) {
      const id = url.pathname.slice("/storage/".length);
      state.calls.push({
        method: "storage",
        accountSid: state.media.get(id)?.accountSid ?? "",
        args: { id, authorization: req.headers.authorization ? "present" : "absent" },
        auth: "",
        at: Date.now(),
      });
      const item = state.media.get(id);
      if (!item) return twilioError(res, 404, 20404, "The requested resource was not found");
      if (item.bytes !== undefined) return streamBytes(res, { ...item, bytes: item.bytes });
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
    state.calls.push({
      method,
      accountSid,
      args,
      auth: token ? `…${token.slice(-4)}` : "",
      at: Date.now(),
    });

    const to = typeof args.To === "string" ? args.To : undefined;
    const script = state.scripts.find(
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

    if (!token || state.accounts.get(accountSid) !== token)
      return twilioError(res, 401, 20003, "Authenticate");

    if (method === "media") {
      const item = state.media.get(mediaSid!);
      if (!item || item.accountSid !== accountSid)
        return twilioError(res, 404, 20404, "The requested resource was not found");
      res.writeHead(307, { location: `/storage/${mediaSid}` });
      return res.end();
    }
    if (!json) return twilioError(res, 404, 20404, "The requested resource was not found");
    if (method === "messages.fetch") {
      const found = state.messages.find(
        (m) => m.sid === messageSid && m.account_sid === accountSid,
      );
      return found
        ? send(res, 200, present(found))
        : twilioError(res, 404, 20404, "The requested resource was not found");
    }
    if (method === "messages.list") return send(res, 200, listPage(state, accountSid, url));

    const result = createMessage(state, accountSid, form);
    if ("error" in result) return twilioError(res, 400, result.code, result.error);
    if (script?.dropConnection) return void req.socket.destroy();
    return send(res, 201, present(result.message));
  }

  return listenOnLoopback(server);
}
