import type { ServerResponse } from "node:http";
import { API, type StoredMessage } from "./twilio-records.ts";

/** Twilio's wire formats as the fake writes and reads them: resources, errors, Basic auth. */

/** A Message resource as Twilio renders it. */
export function present(m: StoredMessage) {
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
export function basicPassword(header: string | undefined, accountSid: string): string | undefined {
  if (!header?.startsWith("Basic ")) return undefined;
  const decoded = Buffer.from(header.slice(6), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon === -1 || decoded.slice(0, colon) !== accountSid) return undefined;
  return decoded.slice(colon + 1);
}

export function twilioError(res: ServerResponse, status: number, code: number, message: string) {
  send(res, status, {
    code,
    message,
    more_info: `https://www.twilio.com/docs/errors/${code}`,
    status,
  });
}

export function send(res: ServerResponse, status: number, body: unknown) {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify(body));
}
