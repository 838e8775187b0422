import type { SendContext, FetchedAttachment } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../../core/envelope.ts";
import { attachmentText, attachmentUrl, mediaMaxMbLimit } from "../attachment-download.ts";
import { urlOnAllowlist } from "../../http/host-allowlist.ts";
import type { DiscordAccount } from "./config.ts";

const MAX_REDIRECTS = 3;

/**
 * Downloads a file a user attached to a Discord message (MESSAGE_CREATE `attachments[].url`), after
 * access control, for the model to read (attachments.ts decides which files are text).
 *
 * - Only hosts on `mediaAllowHosts` are fetched (default Discord's CDN: cdn.discordapp.com,
 *   media.discordapp.net), every redirect followed by hand and checked again: a forged or edited
 *   payload cannot make the Worker fetch an internal or attacker's URL.
 * - No credentials: Discord's attachment URLs are signed in their query, so the bot token is never
 *   sent, to the CDN or anywhere else.
 * - A declared size (the attachment's `size`, then Content-Length) over `mediaMaxMb` is refused
 *   unread, and so is a body that grows past it; at most MAX_ATTACHMENT_PREFIX_BYTES are kept.
 */
export async function fetchDiscordAttachment(
  attachment: InboundAttachment,
  _route: ReplyRoute,
  ctx: SendContext<DiscordAccount>,
): Promise<FetchedAttachment> {
  const account = ctx.account;
  if (!account) return { skipped: "channels.discord is not configured" };
  const link = attachmentUrl(attachment);
  if ("skipped" in link) return link;
  const limit = mediaMaxMbLimit(account.mediaMaxMb);
  if (attachment.sizeBytes !== undefined && attachment.sizeBytes > limit.maxBytes)
    return { skipped: limit.tooLarge };
  let url = link;
  for (let hop = 0; ; hop++) {
    if (!urlOnAllowlist(url.href, account.mediaAllowHosts))
      return { skipped: `${url.host} is not on channels.discord.mediaAllowHosts` };
    const response = await fetch(url, { redirect: "manual", signal: ctx.signal });
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
    return attachmentText(response, limit, attachment);
  }
}
