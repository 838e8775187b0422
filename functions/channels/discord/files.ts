import type { SendContext } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../envelope.ts";
import { MAX_ATTACHMENT_CHARS } from "../attachments.ts";
import { readBodyPrefix } from "../../http/read-prefix.ts";
import { urlOnAllowlist } from "../../http/host-allowlist.ts";
import { discordAccount, discordConfig } from "./config.ts";

const MAX_CONTENT_PREFIX_BYTES = MAX_ATTACHMENT_CHARS * 4;
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
 *   unread, and so is a body that grows past it; at most MAX_CONTENT_PREFIX_BYTES are kept.
 */
export async function fetchDiscordAttachment(attachment: InboundAttachment, route: ReplyRoute, ctx: SendContext): Promise<{ text: string; truncated?: boolean } | { skipped: string }> {
  const discord = discordConfig(ctx.config);
  if (!discord) return { skipped: "channels.discord is not configured" };
  const account = discordAccount(discord, route.accountId);
  if (!attachment.url) return { skipped: "no download link" };
  const maxBytes = Math.floor(account.mediaMaxMb * 1024 * 1024);
  const tooLarge = { skipped: `larger than mediaMaxMb (${account.mediaMaxMb} MB)` };
  if (attachment.sizeBytes !== undefined && attachment.sizeBytes > maxBytes) return tooLarge;
  let url: URL;
  try {
    url = new URL(attachment.url);
  } catch {
    return { skipped: "malformed download link" };
  }
  for (let hop = 0; ; hop++) {
    if (!urlOnAllowlist(url.href, account.mediaAllowHosts)) return { skipped: `${url.host} is not on channels.discord.mediaAllowHosts` };
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
    const body = await readBodyPrefix(response, { maxBytes, keepBytes: MAX_CONTENT_PREFIX_BYTES });
    if (!body.ok) return tooLarge;
    const text = new TextDecoder().decode(body.bytes, { stream: body.truncated });
    return body.truncated ? { text, truncated: true } : { text };
  }
}
