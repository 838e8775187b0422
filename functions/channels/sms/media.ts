import type { SmsAccount } from "./config.ts";
import type { SendContext, FetchedAttachment } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../../core/envelope.ts";
import { attachmentText, attachmentUrl, mediaMaxMbLimit } from "../attachment-download.ts";
import { basicAuth } from "./client.ts";
import { smsTarget } from "./send.ts";

/** Redirects followed per download (a media URL redirects to Twilio's storage, once). */
export const MAX_MEDIA_REDIRECTS = 5;
const TWILIO_API_ORIGIN = "https://api.twilio.com";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Downloads an MMS attachment (`MediaUrl<n>`) the model may read, after access control. The
 * account's credentials go only to the first request, and only when it is on Twilio's API origin
 * (or the configured `apiBaseUrl` origin): a link naming another host is refused. Twilio answers
 * with a redirect to a short-lived storage URL, which is followed by hand without credentials
 * (https only, or the configured API origin for proxies and the local fakes). The body is
 * streamed: a declared size over `mediaMaxMb` is refused before it is read, and at most what the
 * model will see is kept.
 */
export async function fetchSmsMedia(
  attachment: InboundAttachment,
  route: ReplyRoute,
  ctx: SendContext<SmsAccount>,
): Promise<FetchedAttachment> {
  const target = smsTarget(route.accountId, ctx);
  if ("error" in target) return { skipped: target.error };
  const link = attachmentUrl(attachment, "media URL");
  if ("skipped" in link) return link;
  let url = link;
  const apiOrigin = new URL(target.credentials.apiBaseUrl).origin;
  if (url.origin !== apiOrigin && url.origin !== TWILIO_API_ORIGIN)
    return { skipped: `refusing to send Twilio credentials to ${url.host}` };

  let response: Response | undefined;
  for (let hop = 0; ; hop++) {
    response = await fetch(url, {
      headers: hop === 0 ? { authorization: basicAuth(target.credentials) } : {},
      redirect: "manual",
      signal: ctx.signal,
    });
    if (!REDIRECT_STATUSES.has(response.status)) break;
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get("location");
    if (!location) return { skipped: `Twilio answered HTTP ${response.status} without a Location` };
    if (hop >= MAX_MEDIA_REDIRECTS)
      return { skipped: `more than ${MAX_MEDIA_REDIRECTS} redirects` };
    try {
      url = new URL(location, url);
    } catch {
      return { skipped: "malformed redirect" };
    }
    if (url.protocol !== "https:" && url.origin !== apiOrigin)
      return { skipped: `refusing to follow a redirect to ${url.protocol}//${url.host}` };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { skipped: `Twilio answered HTTP ${response.status}` };
  }
  return attachmentText(response, mediaMaxMbLimit(target.account.mediaMaxMb), attachment);
}
