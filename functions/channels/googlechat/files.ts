import type { SendContext } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../envelope.ts";
import { MAX_ATTACHMENT_CHARS } from "../attachments.ts";
import { readBodyPrefix } from "../../http/read-prefix.ts";
import { chatTarget } from "./api.ts";
import { chatAccessToken } from "./token.ts";

const MAX_CONTENT_PREFIX_BYTES = MAX_ATTACHMENT_CHARS * 4;

/**
 * Downloads a file a user uploaded (GET v1/media/{resourceName}?alt=media) with the app's token.
 * The token goes only to the configured `apiBaseUrl` origin and media path (parse.ts builds the link
 * from it; any other link is refused), redirects are not followed, a body over `mediaMaxMb` is
 * refused and at most the first MAX_CONTENT_PREFIX_BYTES are kept.
 */
export async function fetchGoogleChatFile(
  attachment: InboundAttachment,
  route: ReplyRoute,
  ctx: SendContext,
): Promise<{ text: string; truncated?: boolean } | { skipped: string }> {
  const target = chatTarget(route.accountId, ctx);
  if ("error" in target) return { skipped: target.error };
  if (!attachment.url) return { skipped: "no download link (Drive files need user authentication)" };
  let url: URL;
  try {
    url = new URL(attachment.url);
  } catch {
    return { skipped: "malformed download link" };
  }
  if (url.origin !== new URL(target.account.apiBaseUrl).origin || !/\/v1\/media\/[^/]+$/.test(url.pathname)) {
    return { skipped: `refusing to send the app token to ${url.host}` };
  }
  const token = await chatAccessToken(target.key, target.account.tokenUrl, ctx.signal);
  if (!token.ok) return { skipped: token.error };
  const response = await fetch(url, { headers: { authorization: `Bearer ${token.token}` }, redirect: "manual", signal: ctx.signal });
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    return { skipped: `Google Chat answered HTTP ${response.status}` };
  }
  const maxBytes = target.account.mediaMaxMb * 1024 * 1024;
  const body = await readBodyPrefix(response, { maxBytes, keepBytes: MAX_CONTENT_PREFIX_BYTES });
  if (!body.ok) return { skipped: `larger than mediaMaxMb (${target.account.mediaMaxMb} MB)` };
  const text = new TextDecoder().decode(body.bytes, { stream: body.truncated });
  return body.truncated ? { text, truncated: true } : { text };
}
