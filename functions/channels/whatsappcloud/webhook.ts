import type { InboundEnvelope } from "../../core/envelope.ts";
import { sameSecret } from "../../http/same-secret.ts";
import { logClash, webhookAccounts, webhookRoutes } from "../accounts.ts";
import type { WebhookPieces } from "../channel.ts";
import {
  whatsappCloudAccount,
  whatsappCloudSecrets,
  type WhatsAppCloudAccount,
  type WhatsAppCloudChannelConfig,
} from "./config.ts";
import { envelopesFromChange, parseWhatsAppBody } from "./parse.ts";
import { signedWith } from "./verify.ts";

/**
 * The inbound half of the Cloud API for the generic handler: one path per account (`webhookPath`,
 * default /whatsappcloud/webhook). The handler caps the body, calls `verify`, then `parse`, stores
 * every envelope durably and answers 200 only when all are stored (500 otherwise: Meta redelivers
 * for up to 7 days, and the wamid dedup key makes that safe).
 *
 * GET is Meta's subscription handshake: `verify` compares `hub.verify_token` with the account's
 * verify token (403 when it differs or `hub.mode` is not `subscribe`), `parse` echoes
 * `hub.challenge` as plain text. A POST needs a valid X-Hub-Signature-256 (401 otherwise); a change
 * for a number other than the account's `phoneNumberId` is dropped (an app's other numbers).
 */

/** Meta's stated upper bound for one webhook payload (WhatsApp webhooks overview: up to 3 MB). */
export const WHATSAPP_CLOUD_MAX_BODY_BYTES = 3 * 1024 * 1024;

export const whatsappCloudWebhook: WebhookPieces<WhatsAppCloudAccount, WhatsAppCloudChannelConfig> =
  {
    methods: ["GET", "POST"],

    routes: (root) =>
      webhookRoutes(
        "WhatsApp Cloud",
        webhookAccounts(
          root,
          (id) => whatsappCloudAccount(root, id),
          (account) => account.webhookPath,
          logClash("whatsappcloud", "webhookPath"),
        ),
      ),

    maxBodyBytes: () => WHATSAPP_CLOUD_MAX_BODY_BYTES,

    async verify(request, route, env) {
      const secrets = whatsappCloudSecrets(route.account, env);
      if (request.method === "GET") {
        const query = new URL(request.url).searchParams;
        const token = query.get("hub.verify_token");
        const ok =
          query.get("hub.mode") === "subscribe" &&
          !!token &&
          !!secrets.verifyToken &&
          (await sameSecret(token, secrets.verifyToken));
        return ok ? { ok } : { ok, status: 403, reason: "verify token" };
      }
      const header = request.headers.get("x-hub-signature-256");
      if (!secrets.appSecret) return { ok: false, reason: "no-secret" };
      if (await signedWith(request.raw, header, secrets.appSecret)) return { ok: true };
      return { ok: false, reason: header ? "bad-signature" : "missing-signature" };
    },

    parse(request, route, env) {
      if (request.method === "GET") {
        const challenge = new URL(request.url).searchParams.get("hub.challenge") ?? "";
        if (!challenge || challenge.length > 256)
          return { kind: "malformed", reason: "hub.challenge" };
        return {
          kind: "respond",
          response: new Response(challenge, { headers: { "content-type": "text/plain" } }),
        };
      }
      const body = parseWhatsAppBody(request.raw);
      if ("reason" in body) return { kind: "malformed", reason: body.reason };
      const number = whatsappCloudSecrets(route.account, env).phoneNumberId;
      const envelopes: InboundEnvelope[] = [];
      const dropped: string[] = [];
      for (const change of body.changes) {
        const results =
          typeof change === "string"
            ? [{ dropped: change }]
            : change.value.metadata.phone_number_id !== number
              ? [{ dropped: `not number ${number}` }]
              : envelopesFromChange(change, route.account, request.receivedAt);
        for (const result of results)
          if ("envelope" in result) envelopes.push(result.envelope);
          else dropped.push(result.dropped);
      }
      return { kind: "envelopes", envelopes, dropped };
    },
  };
