import type { SendContext } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../envelope.ts";
import { MAX_ATTACHMENT_CHARS } from "../attachments.ts";
import { readBodyPrefix } from "../../http/read-prefix.ts";
import { lineTarget } from "./target.ts";

/** Bytes kept of a download: the model reads at most MAX_ATTACHMENT_CHARS characters (≤ 4 bytes each). */
const MAX_CONTENT_PREFIX_BYTES = MAX_ATTACHMENT_CHARS * 4;

/**
 * Downloads what a user sent (GET /v2/bot/message/{id}/content on the content API host) with the
 * account's access token. The token goes only to the configured `dataApiBaseUrl` origin (parse.ts
 * builds the link from it; a link naming any other origin is refused) and redirects are not
 * followed. A declared size over `mediaMaxMb` is refused before reading; at most the first
 * MAX_CONTENT_PREFIX_BYTES are kept, the rest is not downloaded.
 */
export async function fetchLineContent(
  attachment: InboundAttachment,
  route: ReplyRoute,
  ctx: SendContext,
): Promise<{ text: string; truncated?: boolean } | { skipped: string }> {
  const target = lineTarget(route, ctx);
  if (!target?.accessToken) return { skipped: "no LINE channel access token to download it with" };
  if (!attachment.url) return { skipped: "no download link" };
  let url: URL;
  try {
    url = new URL(attachment.url);
  } catch {
    return { skipped: "malformed download link" };
  }
  const origin = new URL(target.account.dataApiBaseUrl).origin;
  if (url.origin !== origin || !/^\/(?:[^/]+\/)*v2\/bot\/message\/[^/]+\/content$/.test(url.pathname)) {
    return { skipped: `refusing to send the access token to ${url.host}` };
  }
  const response = await fetch(url, { headers: { authorization: `Bearer ${target.accessToken}` }, redirect: "manual", signal: ctx.signal });
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    // 202: LINE is still preparing a video or audio; 404: the content has expired.
    return { skipped: `LINE answered HTTP ${response.status}` };
  }
  const maxBytes = target.account.mediaMaxMb * 1024 * 1024;
  const body = await readBodyPrefix(response, { maxBytes, keepBytes: MAX_CONTENT_PREFIX_BYTES });
  if (!body.ok) return { skipped: `larger than mediaMaxMb (${target.account.mediaMaxMb} MB)` };
  const text = new TextDecoder().decode(body.bytes, { stream: body.truncated });
  return body.truncated ? { text, truncated: true } : { text };
}
