import { createHash } from "node:crypto";
import type { WebhookSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { simulatedId, simulatedSecret } from "../../../../scripts/simulate/secrets.ts";
import { signHubBody } from "../verify.ts";
import { startFakeGraphApi } from "./graph-api.ts";

/**
 * WhatsApp Cloud played by the fake Graph API (simulate/graph-api.ts): a `messages` webhook with
 * one text message, signed with X-Hub-Signature-256 over its raw bytes as Meta signs it, for the
 * default account's number. `--from` is the sender's number (digits; other strings are turned into
 * a number), `--group` a Cloud API group id. Replies are read back from the fake as WhatsApp got them.
 */
const DEFAULT_SENDER = "15551230000";
const SIMULATED_PHONE_NUMBER_ID = "106540352242922";
const SIMULATED_DISPLAY_NUMBER = "15550783881";

/** A wa_id (digits) for whatever the user typed: kept when already one, else derived. */
function waShaped(id: string): string {
  const digits = id.replace(/^\+/, "");
  if (/^\d{6,20}$/.test(digits)) return digits;
  const hash = createHash("sha256").update(id).digest();
  return `1555${String(hash.readUInt32BE(0)).padStart(10, "0").slice(0, 7)}`;
}

function pointAtFake(block: Record<string, unknown>, fakeUrl: string): Record<string, unknown> {
  return { ...block, graphApiBaseUrl: fakeUrl };
}

export const simulator: WebhookSimulator = {
  id: "whatsappcloud",
  startFake: () => startFakeGraphApi(),
  prepare(block, fakeUrl, env) {
    const own = block ?? {};
    const accounts = Object.fromEntries(
      Object.entries(
        (own.accounts as Record<string, Record<string, unknown>> | undefined) ?? {},
      ).map(([id, account]) => [id, pointAtFake(account, fakeUrl)]),
    );
    const appSecret = simulatedSecret(own.appSecret, "WHATSAPP_CLOUD_APP_SECRET", env);
    const accessToken = simulatedSecret(
      own.accessToken,
      "WHATSAPP_CLOUD_ACCESS_TOKEN",
      env,
      "wa-token-sim-",
    );
    const verifyToken = simulatedSecret(own.verifyToken, "WHATSAPP_CLOUD_VERIFY_TOKEN", env);
    const phoneNumberId =
      (typeof own.phoneNumberId === "string" && own.phoneNumberId) ||
      env.WHATSAPP_CLOUD_PHONE_NUMBER_ID ||
      SIMULATED_PHONE_NUMBER_ID;
    return {
      block: {
        ...pointAtFake(own, fakeUrl),
        phoneNumberId,
        ...(Object.keys(accounts).length ? { accounts } : {}),
      },
      env: { ...appSecret.add, ...accessToken.add, ...verifyToken.add },
      secrets: { appSecret: appSecret.value, phoneNumberId },
    };
  },
  async webhook(message, { webhookUrl, secrets }) {
    const from = waShaped(message.from ?? DEFAULT_SENDER);
    const body = JSON.stringify({
      object: "whatsapp_business_account",
      entry: [
        {
          id: "102290129340398",
          changes: [
            {
              field: "messages",
              value: {
                messaging_product: "whatsapp",
                metadata: {
                  display_phone_number: SIMULATED_DISPLAY_NUMBER,
                  phone_number_id: secrets.phoneNumberId,
                },
                contacts: [{ profile: { name: "Simulated User" }, wa_id: from }],
                messages: [
                  {
                    from,
                    id: `wamid.${simulatedId("SIM")}`,
                    timestamp: String(Math.floor(Date.now() / 1000)),
                    type: "text",
                    text: { body: message.text },
                    ...(message.group ? { group_id: message.group } : {}),
                  },
                ],
              },
            },
          ],
        },
      ],
    });
    return new Request(webhookUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": await signHubBody(secrets.appSecret!, body),
      },
      body,
    });
  },
  async replies(fakeUrl, message: SimulatedMessage) {
    const to = message.group ?? waShaped(message.from ?? DEFAULT_SENDER);
    const res = await fetch(`${fakeUrl}/_control/messages?to=${encodeURIComponent(to)}`);
    return ((await res.json()) as Array<{ text: string }>).map((m) => m.text);
  },
};
