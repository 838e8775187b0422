import type { LineAccount } from "./config.ts";
import type { SendContext, FetchedAttachment } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../../core/envelope.ts";
import { attachmentText, attachmentUrl, mediaMaxMbLimit } from "../attachment-download.ts";
import { lineTarget } from "./target.ts";

/**
 * Downloads what a user sent (GET /v2/bot/message/{id}/content on the content API host) with the
 * account's access token. The token goes only to the configured `dataApiBaseUrl` origin (parse.ts
 * builds the link from it; a link naming any other origin is refused) and redirects are not
 * followed. A declared size over `mediaMaxMb` is refused before reading; at most the first
 * MAX_ATTACHMENT_PREFIX_BYTES are kept, the rest is not downloaded.
 */
export async function fetchLineContent(
  attachment: InboundAttachment,
  _route: ReplyRoute,
  ctx: SendContext<LineAccount>,
): Promise<FetchedAttachment> {
  const target = lineTarget(ctx);
  if (!target?.accessToken) return { skipped: "no LINE channel access token to download it with" };
  const link = attachmentUrl(attachment);
  if ("skipped" in link) return link;
  const url = link;
  const origin = new URL(target.account.dataApiBaseUrl).origin;
  if (
    url.origin !== origin ||
    !/^\/(?:[^/]+\/)*v2\/bot\/message\/[^/]+\/content$/.test(url.pathname)
  ) {
    return { skipped: `refusing to send the access token to ${url.host}` };
  }
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${target.accessToken}` },
    redirect: "manual",
    signal: ctx.signal,
  });
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    // 202: LINE is still preparing a video or audio; 404: the content has expired.
    return { skipped: `LINE answered HTTP ${response.status}` };
  }
  return attachmentText(response, mediaMaxMbLimit(target.account.mediaMaxMb), attachment);
}
