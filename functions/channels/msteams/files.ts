import type { SendContext, FetchedAttachment } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../../core/envelope.ts";
import { attachmentText, attachmentUrl, mediaMaxMbLimit } from "../attachment-download.ts";
import { connectorTarget } from "./api.ts";
import { serviceUrlAllowed, type MsTeamsAccount } from "./config.ts";
import { botAccessToken } from "./token.ts";

const MAX_REDIRECTS = 3;

/**
 * Downloads a file a user sent the bot. Personal-chat files arrive as
 * `application/vnd.microsoft.teams.file.download.info` with a pre-authenticated SharePoint/OneDrive
 * `downloadUrl`; pasted images as a Bot Connector `contentUrl` (…/v3/attachments/{id}/views/original)
 * that needs the bot's token.
 *
 * - Only hosts on `mediaAllowHosts` are fetched (default: Microsoft / Teams hosts), redirects
 *   included: each hop is followed by hand (at most three) and checked again.
 * - The first request carries no token; only a 401/403 from the Bot Connector's own attachment API
 *   (`<serviceUrl>v3/attachments/…` of the verified activity the file came in, on a host that is
 *   also on `mediaAuthAllowHosts`) is retried with the bot's token. Any other URL, even on an
 *   allowed host, is the sender's choice: the bot must not lend it its token (confused deputy).
 *   The token is never sent after a redirect to another URL.
 * - A body over `mediaMaxMb` is refused (declared or while reading); at most the first
 *   MAX_ATTACHMENT_PREFIX_BYTES are kept for the model.
 */
export async function fetchTeamsAttachment(
  attachment: InboundAttachment,
  route: ReplyRoute,
  ctx: SendContext<MsTeamsAccount>,
): Promise<FetchedAttachment> {
  const target = connectorTarget(route, ctx);
  if ("error" in target) return { skipped: target.error };
  const { account, serviceUrl } = target;
  const link = attachmentUrl(attachment);
  if ("skipped" in link) return link;
  let url = link;
  let token: string | undefined;
  let authOrigin: string | undefined;
  for (let hop = 0; ; hop++) {
    if (!serviceUrlAllowed(url.href, account.mediaAllowHosts))
      return { skipped: `${url.host} is not on channels.msteams.mediaAllowHosts` };
    const withToken =
      token !== undefined && url.origin === authOrigin && isConnectorAttachment(url, serviceUrl);
    let response = await fetch(url, {
      headers: withToken ? { authorization: `Bearer ${token}` } : {},
      redirect: "manual",
      signal: ctx.signal,
    });
    if (
      (response.status === 401 || response.status === 403) &&
      !withToken &&
      serviceUrlAllowed(url.href, account.mediaAuthAllowHosts) &&
      isConnectorAttachment(url, serviceUrl)
    ) {
      await response.body?.cancel().catch(() => undefined);
      const issued = await botAccessToken(target.credentials, account.loginBaseUrl, ctx.signal);
      if (!issued.ok) return { skipped: issued.error };
      token = issued.token;
      authOrigin = url.origin;
      response = await fetch(url, {
        headers: { authorization: `Bearer ${token}` },
        redirect: "manual",
        signal: ctx.signal,
      });
    }
    if (response.status >= 300 && response.status < 400 && response.headers.get("location")) {
      await response.body?.cancel().catch(() => undefined);
      if (hop >= MAX_REDIRECTS) return { skipped: "too many redirects" };
      url = new URL(response.headers.get("location")!, url);
      continue;
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      return { skipped: `download answered HTTP ${response.status}` };
    }
    return attachmentText(response, mediaMaxMbLimit(account.mediaMaxMb), attachment);
  }
}

/**
 * Whether `url` is the Bot Connector attachment API (GET /v3/attachments/{id}/views/{view}) under
 * the verified activity's serviceUrl: same origin, under the serviceUrl's path (regional prefixes
 * such as /emea/ included), nothing before `v3/attachments/`.
 */
export function isConnectorAttachment(url: URL, serviceUrl: string): boolean {
  let service: URL;
  try {
    service = new URL(serviceUrl);
  } catch {
    return false;
  }
  if (url.origin !== service.origin || url.username || url.password) return false;
  const base = service.pathname.endsWith("/") ? service.pathname : `${service.pathname}/`;
  // WHATWG URL parsing has already resolved dot segments (%2e%2e included).
  return url.pathname.startsWith(`${base}v3/attachments/`);
}
