import type { WebhookPieces, WebhookRoute } from "../channel.ts";
import { logClash, webhookRoutes } from "../accounts.ts";
import { defaultWebhookAck } from "../webhook-ack.ts";
import {
  googleChatWebhookAccounts,
  type GoogleChatAccount,
  type GoogleChatChannelConfig,
} from "./config.ts";
import { parseGoogleChatEvent } from "./parse.ts";
import { verifyGoogleChatToken } from "./verify.ts";

/**
 * The inbound half of Google Chat for the generic webhook handler: one POST path per account
 * (`webhookPath`, default /googlechat). The bearer token is checked before the body is parsed;
 * the event is stored durably before the 200. The answer never carries a reply (replies go
 * through the Chat API once the agent has run): `{}` once stored, 503 when not, so Google sends the
 * event again (as OpenClaw does), and dedup by message name makes that safe.
 */

/** Chat events are small; this bounds what is read before the token is checked. */
export const GOOGLECHAT_MAX_BODY_BYTES = 256 * 1024;

export const googleChatWebhook: WebhookPieces<GoogleChatAccount, GoogleChatChannelConfig> = {
  routes(chat: GoogleChatChannelConfig): WebhookRoute<GoogleChatAccount>[] {
    return webhookRoutes(
      "Google Chat",
      googleChatWebhookAccounts(chat, logClash("googlechat", "webhookPath")),
    );
  },

  maxBodyBytes: () => GOOGLECHAT_MAX_BODY_BYTES,

  async verify(request, route) {
    const result = await verifyGoogleChatToken(
      request.headers.get("authorization"),
      route.account,
      request.receivedAt,
    );
    if (result.ok) return result;
    if (result.reason === "no-audience") {
      console.error(
        `channels.googlechat account ${route.accountId}: audienceType and audience must both be set; refusing requests`,
      );
      return { ok: false, status: 401, reason: "no-secret" };
    }
    // Google's keys could not be fetched: our fault, so Google should send the event again.
    if (result.reason.startsWith("keys unavailable"))
      return { ok: false, status: 503, reason: result.reason };
    return { ok: false, status: 401, reason: result.reason };
  },

  parse(request, route) {
    const result = parseGoogleChatEvent(request.raw, route.account, request.receivedAt);
    if ("malformed" in result) return { kind: "malformed", reason: result.malformed };
    if ("dropped" in result) return { kind: "envelopes", envelopes: [], dropped: [result.dropped] };
    return { kind: "envelopes", envelopes: [result.envelope] };
  },

  ack(result) {
    const base = defaultWebhookAck(result);
    const status = result.allStored ? 200 : 503;
    const headers = new Headers(base.headers);
    headers.set("content-type", "application/json");
    return new Response(
      result.allStored ? "{}" : JSON.stringify({ error: "not accepted, retry" }),
      { status, headers },
    );
  },
};
