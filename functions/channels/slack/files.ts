import type { SendContext } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../envelope.ts";
import { readBodyCapped } from "../../http/read-body.ts";
import { slackTarget } from "./route.ts";

/**
 * Downloads a file a user shared (`url_private`) with the bot token, bounded by
 * `channels.slack.mediaMaxMb`. The token only ever goes to Slack's own hosts (or the configured
 * `apiBaseUrl` host, for proxies and tests) — never to a URL some payload names elsewhere.
 */
export async function fetchSlackFile(attachment: InboundAttachment, route: ReplyRoute, ctx: SendContext): Promise<{ text: string } | { skipped: string }> {
  const target = slackTarget(route, ctx);
  if (!target?.botToken) return { skipped: "no Slack bot token to download it with" };
  if (!attachment.url) return { skipped: "no download link" };
  let url: URL;
  try {
    url = new URL(attachment.url);
  } catch {
    return { skipped: "malformed download link" };
  }
  const apiHost = new URL(target.account.apiBaseUrl).host;
  if (!(url.protocol === "https:" && (url.hostname === "slack.com" || url.hostname.endsWith(".slack.com"))) && url.host !== apiHost) {
    return { skipped: `refusing to send the bot token to ${url.host}` };
  }
  const maxBytes = target.account.mediaMaxMb * 1024 * 1024;
  const response = await fetch(url, { headers: { authorization: `Bearer ${target.botToken}` }, signal: ctx.signal });
  if (!response.ok) return { skipped: `Slack answered HTTP ${response.status}` };
  const type = response.headers.get("content-type") ?? "";
  // Without the files:read scope Slack answers 200 with its sign-in page instead of the file.
  if (type.startsWith("text/html") && !(attachment.mimeType ?? "").includes("html")) {
    return { skipped: "Slack returned a sign-in page: the app needs the files:read scope" };
  }
  const body = await readBodyCapped(response, maxBytes);
  if (!body.ok) return { skipped: `larger than mediaMaxMb (${target.account.mediaMaxMb} MB)` };
  return { text: new TextDecoder().decode(body.bytes) };
}
