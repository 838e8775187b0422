import type { InboundEnvelope } from "../../core/envelope.ts";
import type { WebhookPieces, WebhookRoute } from "../channel.ts";
import { logClash, webhookRoutes } from "../accounts.ts";
import {
  lineSecrets,
  lineWebhookAccounts,
  type LineAccount,
  type LineChannelConfig,
} from "./config.ts";
import { envelopeFromLineEvent, parseLineBody } from "./parse.ts";
import { verifyLineSignature } from "./verify.ts";

/**
 * The inbound half of LINE for the generic webhook handler: one POST path per account
 * (`webhookPath`, default /line/webhook). The handler caps the body, reads it once, calls `verify`,
 * then `parse`, stores every envelope durably and answers 200 only when all are stored (500
 * otherwise: LINE redelivers, when redelivery is on, and dedup makes that safe). The console's
 * "Verify" button posts a signed body with no events: zero envelopes, answered 200.
 */

/** OpenClaw's pre-auth cap for LINE bodies (channels/line, security notes). */
export const LINE_MAX_BODY_BYTES = 64 * 1024;

export const lineWebhook: WebhookPieces<LineAccount, LineChannelConfig> = {
  routes(line: LineChannelConfig): WebhookRoute<LineAccount>[] {
    return webhookRoutes("LINE", lineWebhookAccounts(line, logClash("line", "webhookPath")));
  },

  maxBodyBytes: () => LINE_MAX_BODY_BYTES,

  async verify(request, route, env) {
    const secret = lineSecrets(route.account, env).channelSecret;
    const result = await verifyLineSignature(
      request.raw,
      request.headers.get("x-line-signature"),
      secret,
    );
    if (result.ok) return result;
    if (result.reason === "no-secret")
      console.error(
        `channels.line account ${route.accountId}: no channel secret; refusing requests`,
      );
    return { ok: false, status: 401, reason: result.reason };
  },

  parse(request, route) {
    const body = parseLineBody(request.raw);
    if (body.kind === "malformed") return body;
    const envelopes: InboundEnvelope[] = [];
    const dropped: string[] = [];
    for (const event of body.events) {
      const result = envelopeFromLineEvent(event, {
        account: route.account,
        destination: body.destination,
        receivedAt: request.receivedAt,
      });
      if ("envelope" in result) envelopes.push(result.envelope);
      else dropped.push(result.dropped);
    }
    return { kind: "envelopes", envelopes, dropped };
  },
};
