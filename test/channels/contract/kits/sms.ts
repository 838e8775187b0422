import { signTwilioRequest } from "../../../../functions/channels/sms/verify.ts";
import {
  inboundSms,
  strangerNumber,
  TEST_TWILIO,
  twilioMessages,
  WORKER_ORIGIN,
} from "../../sms/helpers.ts";
import type { ChannelKit, WireRequest } from "../kit.ts";

/** Twilio Messaging webhooks: a form body, X-Twilio-Signature over the URL and the sorted params. */

const PATH = "/webhooks/sms";

async function form(
  params: Array<[string, string]>,
  authToken: string = TEST_TWILIO.authToken,
): Promise<WireRequest> {
  return {
    path: PATH,
    headers: {
      "content-type": "application/x-www-form-urlencoded; charset=utf-8",
      "x-twilio-signature": await signTwilioRequest(authToken, `${WORKER_ORIGIN}${PATH}`, params),
    },
    body: new URLSearchParams(params).toString(),
  };
}

let nextAllowed = 0;
function allowedNumber(): string {
  const number = TEST_TWILIO.allowed[nextAllowed % TEST_TWILIO.allowed.length]!;
  nextAllowed += 1;
  return number;
}

export const smsKit: ChannelKit = {
  channel: "sms",
  async dm(who, text) {
    const from = who === "allowed" ? allowedNumber() : strangerNumber();
    return {
      request: await form(inboundSms({ from, body: text })),
      conversation: from,
      senderId: from,
      accountId: "default",
    };
  },
  async forged(text) {
    const params = inboundSms({ from: allowedNumber(), body: text });
    return { request: await form(params, "not-the-auth-token"), twin: await form(params) };
  },
  async oversized(text, bytes) {
    const params = inboundSms({ from: allowedNumber(), body: text });
    // An extra form field Twilio might add: signed like the rest, ignored by parse.
    return {
      request: await form([...params, ["Padding", "x".repeat(bytes)]]),
      twin: await form(params),
    };
  },
  exceptions: {
    stale: {
      reason:
        "Twilio's signature covers the URL and the form only, no time: a replay is caught by its MessageSid (dedup), not by age",
    },
    forged: {
      reason:
        "a bad X-Twilio-Signature is answered 403 (functions/channels/sms/webhook.ts), as Twilio's own webhook validators do; nothing stored",
      insteadStatus: 403,
    },
  },
  // Signed, but without a MessageSid: not an inbound message.
  malformed: () =>
    form(
      inboundSms({ from: allowedNumber(), body: "x" }).filter(
        ([k]) => !["MessageSid", "SmsSid", "SmsMessageSid"].includes(k),
      ),
    ),
  async replies(conversation) {
    return (await twilioMessages(conversation)).map((m) => m.body);
  },
};
