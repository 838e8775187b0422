import type { GoogleChatAccount } from "./config.ts";
import type { SendContext, FetchedAttachment } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../../core/envelope.ts";
import { attachmentText, attachmentUrl, mediaMaxMbLimit } from "../attachment-download.ts";
import { chatTarget } from "./api.ts";
import { chatAccessToken } from "./token.ts";

/**
 * Downloads a file a user uploaded (GET v1/media/{resourceName}?alt=media) with the app's token.
 * The token goes only to the configured `apiBaseUrl` origin and media path (parse.ts builds the link
 * from it; any other link is refused), redirects are not followed, a body over `mediaMaxMb` is
 * refused and at most the first MAX_ATTACHMENT_PREFIX_BYTES are kept.
 */
export async function fetchGoogleChatFile(
  attachment: InboundAttachment,
  _route: ReplyRoute,
  ctx: SendContext<GoogleChatAccount>,
): Promise<FetchedAttachment> {
  const target = chatTarget(ctx);
  if ("error" in target) return { skipped: target.error };
  if (!attachment.url)
    return { skipped: "no download link (Drive files need user authentication)" };
  const url = attachmentUrl(attachment);
  if ("skipped" in url) return url;
  if (
    url.origin !== new URL(target.account.apiBaseUrl).origin ||
    !/\/v1\/media\/[^/]+$/.test(url.pathname)
  ) {
    return { skipped: `refusing to send the app token to ${url.host}` };
  }
  const token = await chatAccessToken(target.key, target.account.tokenUrl, ctx.signal);
  if (!token.ok) return { skipped: token.error };
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${token.token}` },
    redirect: "manual",
    signal: ctx.signal,
  });
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    return { skipped: `Google Chat answered HTTP ${response.status}` };
  }
  return attachmentText(response, mediaMaxMbLimit(target.account.mediaMaxMb), attachment);
}
