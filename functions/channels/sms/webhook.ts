import type {
  AcceptResult,
  ParseResult,
  VerifyResult,
  WebhookPieces,
  WebhookRequest,
  WebhookRoute,
} from "../channel.ts";
import { defaultWebhookAck } from "../webhook-ack.ts";
import { logClash, webhookRoutes } from "../accounts.ts";
import {
  smsSecrets,
  smsWebhookAccounts,
  statusCallbackPath,
  type SmsAccount,
  type SmsChannelConfig,
} from "./config.ts";
import { formParams, parseInboundMessage, parseStatusCallback, readForm } from "./parse.ts";
import { statusCallbackUrl } from "./send.ts";
import { verifyTwilioSignature } from "./verify.ts";

/**
 * The inbound half of Twilio SMS for the generic webhook handler. Each enabled account serves two
 * paths: its `webhookPath` (incoming messages; default /webhooks/sms) and `<webhookPath>/status`
 * (delivery status callbacks of the messages it sent, which only exist when `publicWebhookUrl` is
 * set). Both are verified the same way, against the URL Twilio signed.
 */

/** OpenClaw refuses SMS webhook bodies over 32 KB before anything else. */
export const SMS_MAX_BODY_BYTES = 32 * 1024;

export interface SmsRoute {
  kind: "inbound" | "status";
  account: SmsAccount;
}

/** Twilio's "do nothing" answer: an empty TwiML document (a non-XML 200 raises warning 12300). */
export const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

const warnedUnsigned = new Set<string>();

export const smsWebhook: WebhookPieces<SmsRoute, SmsChannelConfig> = {
  routes(sms: SmsChannelConfig): WebhookRoute<SmsRoute>[] {
    const accounts = sms
      ? webhookRoutes("Twilio SMS", smsWebhookAccounts(sms, logClash("sms", "webhookPath")))
      : [];
    return accounts.flatMap(({ path, accountId, label, account }) => [
      { path, accountId, label, account: { kind: "inbound", account } },
      {
        path: statusCallbackPath(path),
        accountId,
        label: `${label} status callbacks`,
        account: { kind: "status", account },
      },
    ]);
  },

  maxBodyBytes: () => SMS_MAX_BODY_BYTES,

  async verify(
    request: WebhookRequest,
    route: WebhookRoute<SmsRoute>,
    env: Record<string, unknown>,
  ): Promise<VerifyResult> {
    const { account, kind } = route.account;
    const secrets = smsSecrets(account, env);
    if (secrets.signatureValidationDisabled) {
      if (!warnedUnsigned.has(account.accountId)) {
        warnedUnsigned.add(account.accountId);
        console.warn(
          `channels.sms account ${account.accountId}: dangerouslyDisableSignatureValidation is on; anyone can post as any phone number`,
        );
      }
      return { ok: true };
    }
    // Twilio signed the URL it was given: the public one when configured (proxies), else what arrived here.
    const url = secrets.publicWebhookUrl
      ? kind === "status"
        ? statusCallbackUrl(secrets.publicWebhookUrl)
        : secrets.publicWebhookUrl
      : request.url;
    const result = await verifyTwilioSignature({
      headers: request.headers,
      params: formParams(request.raw),
      url,
      authToken: secrets.authToken,
    });
    if (result.ok) return result;
    if (result.reason === "no-secret")
      console.error(
        `channels.sms account ${account.accountId}: no Twilio authToken; refusing webhooks`,
      );
    return { ok: false, status: 403, reason: result.reason };
  },

  parse(
    request: WebhookRequest,
    route: WebhookRoute<SmsRoute>,
    env: Record<string, unknown>,
  ): ParseResult {
    const { account, kind } = route.account;
    const form = readForm(request.raw, request.headers.get("content-type"));
    if (!form.ok) return { kind: "malformed", reason: form.reason };
    const secrets = smsSecrets(account, env);
    if (kind === "status") {
      const parsed = parseStatusCallback(form.params, secrets);
      if (!parsed.ok) {
        console.warn(
          `channels.sms account ${account.accountId}: status callback ignored: ${parsed.reason}`,
        );
        return { kind: "envelopes", envelopes: [], dropped: [parsed.reason], ackHint: "status" };
      }
      // Recorded as a log line: the message id, its state and Twilio's error code; no body, no phone numbers.
      const { messageSid, status, errorCode } = parsed.status;
      console.log(
        JSON.stringify({
          event: "sms.delivery-status",
          account: account.accountId,
          messageSid,
          status,
          ...(errorCode ? { errorCode } : {}),
        }),
      );
      return { kind: "envelopes", envelopes: [], ackHint: "status" };
    }
    const inbound = parseInboundMessage(form.params, {
      account,
      secrets,
      receivedAt: request.receivedAt,
    });
    switch (inbound.kind) {
      case "malformed":
        return { kind: "malformed", reason: inbound.reason };
      case "dropped":
        return { kind: "envelopes", envelopes: [], dropped: [inbound.reason] };
      case "message":
        return { kind: "envelopes", envelopes: [inbound.envelope] };
    }
  },

  ack(result: AcceptResult): Response {
    // Not stored: 503, so a Twilio told to retry 5xx (`#rp=5xx` on the console URL) tries again; dedup makes that safe.
    if (!result.allStored) return Response.json({ error: "not accepted, retry" }, { status: 503 });
    // The generic ack's headers (what was stored, what was dropped), with Twilio's body.
    const ack = defaultWebhookAck(result);
    if (result.ackHint === "status") return ack;
    const headers = new Headers(ack.headers);
    headers.set("content-type", "text/xml; charset=utf-8");
    return new Response(EMPTY_TWIML, { status: 200, headers });
  },
};
