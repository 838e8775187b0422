import { randomBytes } from "node:crypto";
import { resolveSecret, type SecretInput } from "../../../config/secret-ref.ts";
import { signTwilioRequest } from "../verify.ts";
import { startFakeTwilioApi } from "./twilio-api.ts";
import type { WebhookSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { simulatedSecret } from "../../../../scripts/simulate/secrets.ts";

/**
 * Twilio SMS played by the fake REST API (functions/channels/sms/simulate/twilio-api.ts): an incoming-message webhook
 * form signed with X-Twilio-Signature (HMAC-SHA1 over the URL and the sorted fields, with the
 * account's auth token), replies read back from the messages the fake's Messages API received.
 * SMS has no groups or threads: `--group` / `--thread` are ignored.
 */
const DEFAULT_SENDER = "+15557654321";
/** Twilio's own magic test number, used when the block names no sender. */
const SIMULATED_NUMBER = "+15005550006";

type Block = Record<string, unknown>;

/** The default account's settings: `accounts.<defaultAccount ?? "default">` over the root. */
function defaultAccount(block: Block): Block {
  const accounts = (block.accounts as Record<string, Block> | undefined) ?? {};
  const id = typeof block.defaultAccount === "string" ? block.defaultAccount : "default";
  return { ...block, ...(accounts[id] ?? {}) };
}

function resolved(
  input: unknown,
  fallbacks: string[],
  env: Readonly<Record<string, string>>,
): string | undefined {
  if (input !== undefined) return resolveSecret(input as SecretInput, env);
  for (const name of fallbacks) if (env[name]) return env[name];
  return undefined;
}

export const simulator: WebhookSimulator = {
  id: "sms",
  startFake: () => startFakeTwilioApi(),
  prepare(block, fakeUrl, env) {
    const own = block ?? {};
    const accounts = Object.fromEntries(
      Object.entries((own.accounts as Record<string, Block> | undefined) ?? {}).map(
        ([id, account]) => [id, { ...account, apiBaseUrl: fakeUrl }],
      ),
    );
    const effective = defaultAccount(own);
    const sid = simulatedSecret(effective.accountSid, "TWILIO_ACCOUNT_SID", env, "AC");
    const token = simulatedSecret(effective.authToken, "TWILIO_AUTH_TOKEN", env);
    const fromNumber = resolved(
      effective.fromNumber,
      ["TWILIO_PHONE_NUMBER", "TWILIO_SMS_FROM"],
      env,
    );
    const serviceSid = resolved(
      effective.messagingServiceSid,
      ["TWILIO_MESSAGING_SERVICE_SID"],
      env,
    );
    const sender = fromNumber || serviceSid ? {} : { fromNumber: SIMULATED_NUMBER };
    const publicWebhookUrl =
      typeof effective.publicWebhookUrl === "string"
        ? effective.publicWebhookUrl
        : env.SMS_PUBLIC_WEBHOOK_URL;
    return {
      block: {
        ...own,
        apiBaseUrl: fakeUrl,
        ...sender,
        ...(Object.keys(accounts).length ? { accounts } : {}),
      },
      env: { ...sid.add, ...token.add },
      secrets: {
        accountSid: sid.value,
        authToken: token.value,
        to: fromNumber ?? SIMULATED_NUMBER,
        ...(serviceSid && !fromNumber ? { messagingServiceSid: serviceSid } : {}),
        // Twilio signs the URL in its console: the public one when the block names it.
        ...(publicWebhookUrl ? { signedUrl: publicWebhookUrl } : {}),
      },
    };
  },
  async webhook(message, { webhookUrl, secrets, fakeUrl }) {
    // The fake REST API answers only accounts it knows: this one, with the token the Worker sends.
    await fetch(`${fakeUrl}/_control/account`, {
      method: "POST",
      body: JSON.stringify({ accountSid: secrets.accountSid, authToken: secrets.authToken }),
    });
    const messageSid = `SM${randomBytes(16).toString("hex")}`;
    const params: Array<[string, string]> = [
      ["ToCountry", "US"],
      ["SmsMessageSid", messageSid],
      ["NumMedia", "0"],
      ["SmsSid", messageSid],
      ["SmsStatus", "received"],
      ["Body", message.text],
      ["To", secrets.to!],
      ["NumSegments", String(Math.max(1, Math.ceil(message.text.length / 153)))],
      ["MessageSid", messageSid],
      ["AccountSid", secrets.accountSid!],
      ["From", senderOf(message)],
      ["FromCountry", "US"],
      ["ApiVersion", "2010-04-01"],
      ...(secrets.messagingServiceSid
        ? ([["MessagingServiceSid", secrets.messagingServiceSid]] as Array<[string, string]>)
        : []),
    ];
    return new Request(webhookUrl, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": await signTwilioRequest(
          secrets.authToken!,
          secrets.signedUrl ?? webhookUrl,
          params,
        ),
      },
      body: new URLSearchParams(params).toString(),
    });
  },
  async replies(fakeUrl, message) {
    const res = await fetch(
      `${fakeUrl}/_control/messages?to=${encodeURIComponent(senderOf(message))}`,
    );
    // Bodies are plain text already (the channel formats before sending): a phone shows them as they are.
    return ((await res.json()) as Array<{ body: string }>).map((m) => m.body);
  },
};

function senderOf(message: SimulatedMessage): string {
  return message.from ?? DEFAULT_SENDER;
}
