import { env, SELF } from "cloudflare:test";
import { signHubBody } from "../../../functions/channels/whatsappcloud/verify.ts";
import { TEST_WHATSAPP_CLOUD } from "../../../functions/channels/whatsappcloud/test-fixtures.ts";
import { pairingForgetter } from "../wait.ts";

export { TEST_WHATSAPP_CLOUD };
export { script as scriptModel, newScenario } from "../../agent/model-helpers.ts";
export { settle, waitFor } from "../wait.ts";

const T = TEST_WHATSAPP_CLOUD;
export const fakeGraph = () =>
  String((env as unknown as Record<string, unknown>).FAKE_WHATSAPP_CLOUD_URL);

let counter = 0;
/** A WhatsApp user id (wa_id: the number's digits), unique per call so parallel files never share a chat. */
export function waId(): string {
  counter += 1;
  const tail = `${Date.now() % 1e7}${counter % 100}${Math.floor(Math.random() * 100)}`;
  return `1555${tail.padStart(11, "0").slice(-11)}`;
}

/** A `wamid.…` message id as Meta writes them, unique per call. */
export function wamid(): string {
  counter += 1;
  return `wamid.HBgL${Date.now().toString(36)}${counter}${Math.floor(Math.random() * 1e9).toString(36)}`.toUpperCase();
}

/** Which business number (and so which account and app secret) a request is for. */
export interface Business {
  path: string;
  phoneNumberId: string;
  display: string;
  secret: string;
  accountId: string;
}
export const DEFAULT_NUMBER: Business = {
  path: T.path,
  phoneNumberId: T.phoneNumberId,
  display: T.displayPhoneNumber,
  secret: T.appSecret,
  accountId: "default",
};
export const BIZ_NUMBER: Business = {
  path: T.bizPath,
  phoneNumberId: T.bizPhoneNumberId,
  display: T.bizDisplayPhoneNumber,
  secret: T.bizAppSecret,
  accountId: "biz",
};

/** One user message object as Meta sends it (`timestamp` in Unix seconds, as a string). */
export function waMessage(
  from: string,
  type: string,
  content: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    from,
    id: wamid(),
    timestamp: String(Math.floor(Date.now() / 1000)),
    type,
    ...content,
    ...extra,
  };
}

export const textMessage = (from: string, body: string, extra: Record<string, unknown> = {}) =>
  waMessage(from, "text", { text: { body } }, extra);

/** A whole webhook body: one entry, one `messages` change for `business`. */
export function webhookBody(
  business: Business,
  value: { messages?: unknown[]; statuses?: unknown[]; names?: Record<string, string> },
): string {
  const senders = [...new Set((value.messages ?? []).map((m) => (m as { from: string }).from))];
  return JSON.stringify({
    object: "whatsapp_business_account",
    entry: [
      {
        id: T.wabaId,
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: {
                display_phone_number: business.display,
                phone_number_id: business.phoneNumberId,
              },
              ...(senders.length
                ? {
                    contacts: senders.map((wa) => ({
                      profile: { name: value.names?.[wa] ?? "Test User" },
                      wa_id: wa,
                    })),
                  }
                : {}),
              ...(value.messages ? { messages: value.messages } : {}),
              ...(value.statuses ? { statuses: value.statuses } : {}),
            },
          },
        ],
      },
    ],
  });
}

/** The request Meta would POST: raw bytes, X-Hub-Signature-256 over them. */
export async function signedRequest(
  body: string,
  business: Pick<Business, "path" | "secret">,
  signature?: string | null,
): Promise<{ path: string; headers: Record<string, string>; body: string }> {
  const sig = signature === undefined ? await signHubBody(business.secret, body) : signature;
  return {
    path: business.path,
    headers: {
      "content-type": "application/json",
      ...(sig !== null ? { "x-hub-signature-256": sig } : {}),
    },
    body,
  };
}

export async function postWhatsApp(
  body: string,
  business: Business = BIZ_NUMBER,
  signature?: string | null,
): Promise<Response> {
  const request = await signedRequest(body, business, signature);
  return SELF.fetch(`https://edgeclaw.test${request.path}`, {
    method: "POST",
    headers: request.headers,
    body: request.body,
  });
}

export interface FakeWhatsAppMessage {
  to: string;
  text: string;
  recipientType: string;
  contextId?: string;
  phoneNumberId: string;
  id: string;
}

export async function graphMessages(to: string): Promise<FakeWhatsAppMessage[]> {
  return (await (
    await fetch(`${fakeGraph()}/_control/messages?to=${encodeURIComponent(to)}`)
  ).json()) as FakeWhatsAppMessage[];
}

export interface FakeGraphCall {
  api: string;
  to?: string;
  body: Record<string, unknown>;
  token: string;
  status: number;
}

export async function graphCalls(api?: string): Promise<FakeGraphCall[]> {
  const query = api ? `?api=${api}` : "";
  return (await (await fetch(`${fakeGraph()}/_control/calls${query}`)).json()) as FakeGraphCall[];
}

export async function scriptGraph(script: {
  api: "send" | "read" | "media";
  to?: string;
  times?: number;
  status?: number;
  code?: number;
  dropConnection?: boolean;
}): Promise<void> {
  await fetch(`${fakeGraph()}/_control/script`, { method: "POST", body: JSON.stringify(script) });
}

export async function serveMedia(
  mediaId: string,
  content: { content?: string; bytes?: number; mimeType?: string },
): Promise<void> {
  await fetch(`${fakeGraph()}/_control/media`, {
    method: "POST",
    body: JSON.stringify({ mediaId, ...content }),
  });
}

export const forgetPairingWhenDone = pairingForgetter("whatsappcloud");
