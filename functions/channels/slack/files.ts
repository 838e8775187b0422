import type { SlackAccount } from "./config.ts";
import type { SendContext, FetchedAttachment } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../../core/envelope.ts";
import { attachmentText, attachmentUrl, mediaMaxMbLimit } from "../attachment-download.ts";
import { slackTarget } from "./route.ts";

/** Redirects followed per download (Slack's file links redirect once or twice between its hosts). */
export const MAX_FILE_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Downloads a file a user shared (`url_private`) with the bot token. The token only ever goes to
 * Slack's own hosts (or the configured `apiBaseUrl` host, for proxies and tests), and redirects are
 * followed by hand, each hop checked the same way, so a link (or a redirect) naming another host
 * never receives it. The body is streamed: a declared size over `channels.slack.mediaMaxMb` is
 * refused before it is read, and at most MAX_ATTACHMENT_PREFIX_BYTES are kept (the rest is not downloaded).
 */
export async function fetchSlackFile(
  attachment: InboundAttachment,
  _route: ReplyRoute,
  ctx: SendContext<SlackAccount>,
): Promise<FetchedAttachment> {
  const target = slackTarget(ctx);
  if (!target?.botToken) return { skipped: "no Slack bot token to download it with" };
  const link = attachmentUrl(attachment);
  if ("skipped" in link) return link;
  let url = link;
  const apiOrigin = new URL(target.account.apiBaseUrl).origin;
  let response: Response | undefined;
  for (let hop = 0; ; hop++) {
    if (!isSlackFileHost(url, apiOrigin)) {
      return {
        skipped:
          hop === 0
            ? `refusing to send the bot token to ${url.host}`
            : `refusing to follow a redirect to ${url.host} (not a Slack host)`,
      };
    }
    response = await fetch(url, {
      headers: { authorization: `Bearer ${target.botToken}` },
      redirect: "manual",
      signal: ctx.signal,
    });
    if (!REDIRECT_STATUSES.has(response.status)) break;
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get("location");
    if (!location) return { skipped: `Slack answered HTTP ${response.status} without a Location` };
    if (hop >= MAX_FILE_REDIRECTS) return { skipped: `more than ${MAX_FILE_REDIRECTS} redirects` };
    try {
      url = new URL(location, url);
    } catch {
      return { skipped: "malformed redirect" };
    }
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { skipped: `Slack answered HTTP ${response.status}` };
  }
  const type = response.headers.get("content-type") ?? "";
  // Without the files:read scope Slack answers 200 with its sign-in page instead of the file.
  if (type.startsWith("text/html") && !(attachment.mimeType ?? "").includes("html")) {
    await response.body?.cancel().catch(() => undefined);
    return { skipped: "Slack returned a sign-in page: the app needs the files:read scope" };
  }
  return attachmentText(response, mediaMaxMbLimit(target.account.mediaMaxMb), attachment);
}

/** Slack's own hosts over HTTPS (commercial and GovSlack), or exactly the configured Web API origin. */
function isSlackFileHost(url: URL, apiOrigin: string): boolean {
  if (url.origin === apiOrigin) return true;
  if (url.protocol !== "https:") return false;
  return ["slack.com", "slack-gov.com"].some(
    (domain) => url.hostname === domain || url.hostname.endsWith(`.${domain}`),
  );
}
