import type { SendContext, FetchedAttachment } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../../core/envelope.ts";
import { attachmentText, attachmentUrl, mediaMaxMbLimit } from "../attachment-download.ts";
import { fetchWithTenantToken } from "./api.ts";
import { feishuApiBase, type FeishuAccount } from "./config.ts";
import { feishuTarget } from "./messages.ts";

/**
 * Downloads a file or image a user sent (GET open-apis/im/v1/messages/{message_id}/resources/{key}
 * ?type=file|image) with the tenant token. The token goes only to the account's own API origin and
 * that path (parse.ts builds the link; any other link is refused), redirects are not followed, a
 * declared size over `mediaMaxMb` is refused and at most the first bytes the model can read are kept.
 */
export async function fetchFeishuResource(
  attachment: InboundAttachment,
  _route: ReplyRoute,
  ctx: SendContext<FeishuAccount>,
): Promise<FetchedAttachment> {
  const target = feishuTarget(ctx);
  if (!target?.credentials) return { skipped: "no Feishu app credentials to download it with" };
  const link = attachmentUrl(attachment);
  if ("skipped" in link) return link;
  const url = link;
  const base = new URL(feishuApiBase(target.account));
  if (
    url.origin !== base.origin ||
    !/^\/(?:[^/]+\/)*open-apis\/im\/v1\/messages\/[^/]+\/resources\/[^/]+$/.test(url.pathname)
  ) {
    return { skipped: `refusing to send the tenant token to ${url.host}` };
  }
  const response = await fetchWithTenantToken(target.account, target.credentials, url, ctx.signal);
  if ("skipped" in response) return response;
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    return { skipped: `Feishu answered HTTP ${response.status}` };
  }
  return attachmentText(response, mediaMaxMbLimit(target.account.mediaMaxMb), attachment);
}
