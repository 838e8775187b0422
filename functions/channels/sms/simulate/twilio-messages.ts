import { randomBytes } from "node:crypto";
import { fetchLikePlatform } from "../../../../scripts/simulate/fakes/fetch-media.ts";
import { API, type StoredMessage } from "./twilio-records.ts";
import type { TwilioFakeState } from "./twilio-state.ts";
import { present } from "./twilio-wire.ts";

/**
 * Messages.json: create a message as Twilio checks one (To, From or MessagingServiceSid, a body
 * or media, at most 1600 characters and 10 MediaUrls, each then fetched as Twilio does; "sent" a
 * moment later), and list them (To, From, DateSent filters, newest first, paged).
 */
export function createMessage(
  state: TwilioFakeState,
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
    return { error: "A text message body or state.media urls must be specified.", code: 21602 };
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
    seq: ++state.seq,
    num_media: String(mediaUrls.length),
    ...(form.get("StatusCallback") ? { status_callback: form.get("StatusCallback")! } : {}),
  };
  state.messages.push(message);
  if (mediaUrls.length) {
    message.media_urls = mediaUrls;
    message.media_fetched = [];
    for (const mediaUrl of mediaUrls)
      void fetchLikePlatform(mediaUrl, { head: true }).then((f) => message.media_fetched!.push(f));
  }
  // A moment later the carrier has it: "sent", with a date_sent.
  setTimeout(() => {
    message.status = "sent";
    message.sent = Date.now();
  }, 200).unref();
  return { message };
}

/**
 * GET Messages.json: PageSize (default 50, max 1000), Page + PageToken, `next_page_uri` while more
 * remain.
 */
export function listPage(state: TwilioFakeState, accountSid: string, url: URL) {
  const q = url.searchParams;
  const day = (value: string) => Date.parse(`${value.slice(0, 10)}T00:00:00Z`);
  const matching = state.messages
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
        !q.get("DateSent<") || (m.sent !== null && m.sent < day(q.get("DateSent<")!) + 86_400_000),
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
