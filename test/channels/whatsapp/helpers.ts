import { env, SELF } from "cloudflare:test";
import type { Env } from "../../../workers/env.ts";
import { signRequest } from "../../../functions/channels/companion/signature.ts";
import { TEST_WHATSAPP } from "../../../functions/channels/whatsapp/test-fixtures.ts";
import { pairingForgetter, settle, waitFor } from "../wait.ts";

export { newScenario, script as scriptModel, recorded } from "../../agent/model-helpers.ts";
export { settle, waitFor };

export const workerEnv = env as unknown as Env;
const fake = () => String(workerEnv.FAKE_WHATSAPP_URL);
export const SELF_JID = TEST_WHATSAPP.self;

let counter = 0;
const unique = () => {
  counter += 1;
  return `${Date.now() % 1e9}${counter.toString().padStart(3, "0")}${Math.floor(Math.random() * 1e3)}`;
};
/** A fresh phone-number JID (`1555…@s.whatsapp.net`) and its E.164 form. */
export function person(): { jid: string; phone: string } {
  const digits = `1555${unique()}`.slice(0, 15);
  return { jid: `${digits}@s.whatsapp.net`, phone: `+${digits}` };
}
export const groupJid = () => `1203630${unique()}@g.us`;
export const messageId = () => `3EB0${unique().padEnd(16, "0")}`.toUpperCase();

/** A `messages.upsert` WAMessage as Baileys emits it (made JSON-safe by the connector). */
export function waMessage(fields: {
  chat: string;
  from?: string;
  text: string;
  id?: string;
  mentions?: string[];
  quotedParticipant?: string;
}) {
  const group = fields.chat.endsWith("@g.us");
  const context =
    fields.mentions || fields.quotedParticipant
      ? {
          contextInfo: {
            ...(fields.mentions ? { mentionedJid: fields.mentions } : {}),
            ...(fields.quotedParticipant
              ? { participant: fields.quotedParticipant, stanzaId: "3EB0ECQUOTED" }
              : {}),
          },
        }
      : {};
  return {
    key: {
      remoteJid: fields.chat,
      fromMe: false,
      id: fields.id ?? messageId(),
      ...(group ? { participant: fields.from } : {}),
    },
    messageTimestamp: Math.floor(Date.now() / 1000),
    pushName: "Tester",
    message:
      Object.keys(context).length > 0
        ? { extendedTextMessage: { text: fields.text, ...context } }
        : { conversation: fields.text },
  };
}

export function messagePayload(message: ReturnType<typeof waMessage>) {
  return { type: "message", self: SELF_JID, message };
}

/** Hands one event to the Worker as the companion's connector does (signed /internal/companion/events). */
export async function deliver(
  accountId: string,
  payload: { type: string; message?: { key: { remoteJid: string; id: string } } } & Record<
    string,
    unknown
  >,
  eventId = `${payload.message?.key.remoteJid}:${payload.message?.key.id}`,
): Promise<{ status: string; outcomes: string[]; dropped?: string[]; error?: string }> {
  const body = JSON.stringify({
    channel: "whatsapp",
    accountId,
    events: [{ eventId, payload, receivedAt: Date.now() }],
  });
  const headers = await signRequest(TEST_WHATSAPP.companionKey, {
    method: "POST",
    path: "/internal/companion/events",
    body: new TextEncoder().encode(body),
    timestamp: Math.floor(Date.now() / 1000),
  });
  const res = await SELF.fetch("https://edgeclaw.test/internal/companion/events", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  if (res.status !== 200)
    throw new Error(`companion events answered ${res.status}: ${await res.text()}`);
  const [result] = (
    (await res.json()) as {
      results: Array<{ status: string; outcomes?: string[]; dropped?: string[]; error?: string }>;
    }
  ).results;
  return { ...result!, outcomes: result!.outcomes ?? [] };
}

export interface Command {
  commandId: string;
  op: string;
  target: { conversationId: string; replyToId?: string; messageId?: string };
  payload: Record<string, unknown>;
}

/** What the fake companion executed for a chat (each command once, however often the Worker sent it). */
export async function commandsFor(jid: string): Promise<Command[]> {
  return (await (
    await fetch(`${fake()}/_control/commands?to=${encodeURIComponent(jid)}`)
  ).json()) as Command[];
}

export const sendsTo = async (jid: string) =>
  (await commandsFor(jid)).filter((command) => command.op === "send");

/** The replies sent to a chat, once they have settled to `count`. */
export async function sentSettled(jid: string, count: number): Promise<Command[]> {
  await waitFor(async () => ((await sendsTo(jid)).length >= count ? true : undefined));
  await settle(1500);
  return sendsTo(jid);
}

export const companionOffline = (offline: boolean) =>
  fetch(`${fake()}/_control/${offline ? "offline" : "online"}`, { method: "POST" });

export const forgetPairingWhenDone = pairingForgetter("whatsapp");
