import type { InboundAttachment, ReplyRoute } from "../../core/envelope.ts";
import type { FetchedAttachment, SendContext } from "../adapter.ts";
import { attachmentText, attachmentUrl, mediaMaxMbLimit } from "../attachment-download.ts";
import { callGraph } from "./api.ts";
import { whatsappCloudSecrets, type WhatsAppCloudAccount } from "./config.ts";

/**
 * Downloads what a user sent (Cloud API "Retrieve media URL", "Download media"): GET
 * /<version>/<media_id> answers `{ url, mime_type, file_size }`, then GET that url, both with the
 * access token. The token goes only to the configured Graph origin (parse builds the first link
 * from it) and to Meta's media host; redirects are not followed. A declared size over
 * `mediaMaxMb` is refused before reading.
 */

/** Where Meta serves media downloads (the `url` the media node answers). */
const META_MEDIA_ORIGIN = "https://lookaside.fbsbx.com";

export async function fetchWhatsAppCloudMedia(
  attachment: InboundAttachment,
  _route: ReplyRoute,
  ctx: SendContext<WhatsAppCloudAccount>,
): Promise<FetchedAttachment> {
  const account = ctx.account;
  const token = account && whatsappCloudSecrets(account, ctx.env).accessToken;
  if (!token) return { skipped: "no WhatsApp Cloud access token" };
  const link = attachmentUrl(attachment, "media id");
  if ("skipped" in link) return link;
  const graph = new URL(account.graphApiBaseUrl).origin;
  if (link.origin !== graph) return { skipped: `refusing to send the token to ${link.host}` };
  const node = await callGraph(link.href, token, ctx.signal);
  if (!node.ok) return { skipped: `media lookup failed: ${node.error.message}` };
  const found = node.body as { url?: string; mime_type?: string; file_size?: number } | undefined;
  const limit = mediaMaxMbLimit(account.mediaMaxMb);
  if (Number(found?.file_size) > limit.maxBytes) return { skipped: limit.tooLarge };
  const url = URL.canParse(found?.url ?? "") ? new URL(found!.url!) : undefined;
  if (!url || (url.origin !== graph && url.origin !== META_MEDIA_ORIGIN))
    return { skipped: "the media URL is not on Meta's media host" };
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${token}` },
    redirect: "manual",
    signal: ctx.signal,
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    // Meta keeps inbound media 30 days, and the URL itself lives 5 minutes.
    return { skipped: `media download answered HTTP ${response.status}` };
  }
  return attachmentText(response, limit, {
    ...attachment,
    mimeType: found?.mime_type ?? attachment.mimeType,
  });
}
