import type { WebhookPieces, WebhookRoute } from "../channel.ts";
import { logClash, webhookRoutes } from "../accounts.ts";
import {
  feishuSecrets,
  feishuWebhookAccounts,
  type FeishuAccount,
  type FeishuChannelConfig,
} from "./config.ts";
import { parseFeishuBody } from "./parse.ts";
import { verifiedFeishuBody, verifyFeishuRequest } from "./verify.ts";

/**
 * The inbound half of Feishu / Lark for the generic webhook handler: one POST path per webhook-mode
 * account (`webhookPath`, default /feishu/events). Feishu wants 200 within 3 s (the challenge within
 * 1 s) and retries at 15 s, 5 min, 1 h and 6 h otherwise; the handler answers 200 only once every
 * envelope is stored, and event-id dedup makes the retries harmless.
 */

/** Pre-auth cap: an event body is a few KB; a long post stays well under this. */
export const FEISHU_MAX_BODY_BYTES = 256 * 1024;

export const feishuWebhook: WebhookPieces<FeishuAccount, FeishuChannelConfig> = {
  routes(feishu: FeishuChannelConfig): WebhookRoute<FeishuAccount>[] {
    return webhookRoutes(
      "Feishu",
      feishuWebhookAccounts(feishu, logClash("feishu", "webhookPath")),
    );
  },

  maxBodyBytes: () => FEISHU_MAX_BODY_BYTES,

  async verify(request, route, env) {
    const result = await verifyFeishuRequest(
      request,
      feishuSecrets(route.account, env),
      route.account.signatureMaxAgeSeconds,
    );
    if (result.ok) return { ok: true };
    if (result.reason === "no-secret")
      console.error(
        `channels.feishu account ${route.accountId}: no encryptKey or verificationToken; refusing requests`,
      );
    return { ok: false, status: 401, reason: result.reason };
  },

  parse(request, route, env) {
    const body = verifiedFeishuBody(request.raw);
    if (!body) return { kind: "malformed", reason: "body was not verified" };
    return parseFeishuBody(body, {
      account: route.account,
      botOpenId: feishuSecrets(route.account, env).botOpenId,
      receivedAt: request.receivedAt,
    });
  },
};
