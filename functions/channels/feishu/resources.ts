import type { SendContext } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../envelope.ts";
import { MAX_ATTACHMENT_CHARS } from "../attachments.ts";
import { readBodyPrefix } from "../../http/read-prefix.ts";
import { fetchWithTenantToken } from "./api.ts";
import { feishuApiBase } from "./config.ts";
import { feishuTarget } from "./messages.ts";

const MAX_CONTENT_PREFIX_BYTES = MAX_ATTACHMENT_CHARS * 4;

/**
 * Downloads a file or image a user sent (GET open-apis/im/v1/messages/{message_id}/resources/{key}
 * ?type=file|image) with the tenant token. The token goes only to the account's own API origin and
 * that path (parse.ts builds the link; any other link is refused), redirects are not followed, a
 * declared size over `mediaMaxMb` is refused and at most the first bytes the model can read are kept.
 */
export async function fetchFeishuResource(
  attachment: InboundAttachment,
  route: ReplyRoute,
  ctx: SendContext,
): Promise<{ text: string; truncated?: boolean } | { skipped: string }> {
  const target = feishuTarget(route.accountId, ctx);
  if (!target?.credentials) return { skipped: "no Feishu app credentials to download it with" };
  if (!attachment.url) return { skipped: "no download link" };
  let url: URL;
  try {
    url = new URL(attachment.url);
  } catch {
    return { skipped: "malformed download link" };
  }
  const base = new URL(feishuApiBase(target.account));
  if (url.origin !== base.origin || !/^\/(?:[^/]+\/)*open-apis\/im\/v1\/messages\/[^/]+\/resources\/[^/]+$/.test(url.pathname)) {
    return { skipped: `refusing to send the tenant token to ${url.host}` };
  }
  const response = await fetchWithTenantToken(target.account, target.credentials, url, ctx.signal);
  if ("skipped" in response) return response;
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    return { skipped: `Feishu answered HTTP ${response.status}` };
  }
  const body = await readBodyPrefix(response, { maxBytes: target.account.mediaMaxMb * 1024 * 1024, keepBytes: MAX_CONTENT_PREFIX_BYTES });
  if (!body.ok) return { skipped: `larger than mediaMaxMb (${target.account.mediaMaxMb} MB)` };
  const text = new TextDecoder().decode(body.bytes, { stream: body.truncated });
  return body.truncated ? { text, truncated: true } : { text };
}
