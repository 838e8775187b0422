import { env, SELF } from "cloudflare:test";
import { encryptFeishu, signFeishuRequest } from "../../../functions/channels/feishu/crypto.ts";
import { TEST_FEISHU } from "../../../functions/channels/feishu/test-fixtures.ts";
import { pairingForgetter } from "../wait.ts";

export { TEST_FEISHU };
export { script as scriptModel, newScenario } from "../../agent/model-helpers.ts";

export const fakeFeishu = () => String((env as unknown as Record<string, unknown>).FAKE_FEISHU_URL);

let counter = 0;
/** A Feishu-shaped id (`ou_`, `oc_`, `om_` + 32 hex), unique per call. */
export function feishuId(prefix: "ou" | "oc" | "om" | "omt"): string {
  counter += 1;
  const hex = `${Date.now().toString(16)}${counter.toString(16).padStart(4, "0")}${Math.floor(Math.random() * 0xffffffff).toString(16)}`;
  return `${prefix}_${hex.padEnd(32, "0").slice(0, 32)}`;
}

export interface MessageInput {
  sender: string;
  chatId?: string;
  chatType?: "p2p" | "group";
  messageId?: string;
  threadId?: string;
  messageType?: string;
  content: Record<string, unknown>;
  mentions?: Array<{ key: string; id: { open_id: string }; name: string }>;
  senderType?: string;
  eventId?: string;
  appId?: string;
  token?: string;
}

/** A schema 2.0 `im.message.receive_v1` event as Feishu sends it (before encryption). */
export function messageEvent(input: MessageInput): Record<string, unknown> {
  const chatId = input.chatId ?? feishuId("oc");
  return eventBody(
    "im.message.receive_v1",
    {
      sender: {
        sender_id: { open_id: input.sender, union_id: "on_x", user_id: null },
        sender_type: input.senderType ?? "user",
        tenant_key: "tk",
      },
      message: {
        message_id: input.messageId ?? feishuId("om"),
        root_id: input.threadId ? feishuId("om") : "",
        parent_id: "",
        ...(input.threadId ? { thread_id: input.threadId } : {}),
        chat_id: chatId,
        chat_type: input.chatType ?? "p2p",
        message_type: input.messageType ?? "text",
        content: JSON.stringify(input.content),
        mentions: input.mentions ?? [],
        create_time: String(Date.now()),
      },
    },
    input,
  );
}

export function eventBody(
  eventType: string,
  event: Record<string, unknown>,
  opts: { eventId?: string; appId?: string; token?: string } = {},
): Record<string, unknown> {
  return {
    schema: "2.0",
    header: {
      event_id: opts.eventId ?? feishuId("om").replace("om_", "ev"),
      event_type: eventType,
      create_time: String(Date.now()),
      token: opts.token ?? TEST_FEISHU.verificationToken,
      app_id: opts.appId ?? TEST_FEISHU.appId,
      tenant_key: "tk",
    },
    event,
  };
}

export const botMention = (botOpenId: string = TEST_FEISHU.botOpenId) => ({
  key: "@_user_1",
  id: { open_id: botOpenId },
  name: "edgeclaw",
});

export interface PostOptions {
  path?: string;
  /** Encrypt with this key (default: the default account's); null = send plain JSON. */
  encryptKey?: string | null;
  /** Sign with this key (default: the encrypt key); null = no signature headers. */
  signKey?: string | null;
  timestamp?: string;
  signature?: string;
  headers?: Record<string, string>;
}

/** The bytes and headers Feishu would send for `body`. */
export async function feishuRequest(
  body: Record<string, unknown>,
  options: PostOptions = {},
): Promise<{ raw: string; headers: Record<string, string> }> {
  const encryptKey = options.encryptKey === undefined ? TEST_FEISHU.encryptKey : options.encryptKey;
  const raw = encryptKey
    ? JSON.stringify({ encrypt: await encryptFeishu(encryptKey, JSON.stringify(body)) })
    : JSON.stringify(body);
  const signKey = options.signKey === undefined ? encryptKey : options.signKey;
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (signKey) {
    const timestamp = options.timestamp ?? String(Math.floor(Date.now() / 1000));
    const nonce = `n${Math.floor(Math.random() * 1e12)}`;
    headers["x-lark-request-timestamp"] = timestamp;
    headers["x-lark-request-nonce"] = nonce;
    headers["x-lark-signature"] =
      options.signature ?? (await signFeishuRequest(timestamp, nonce, signKey, raw));
  }
  return { raw, headers: { ...headers, ...options.headers } };
}

export async function postFeishu(
  body: Record<string, unknown>,
  options: PostOptions = {},
): Promise<Response> {
  const { raw, headers } = await feishuRequest(body, options);
  return postRaw(raw, headers, options.path);
}

export function postRaw(
  raw: string | Uint8Array,
  headers: Record<string, string>,
  path = "/feishu/events",
): Promise<Response> {
  return SELF.fetch(`https://edgeclaw.test${path}`, { method: "POST", headers, body: raw });
}

/** The plain (token-only) account's request. */
export const PLAIN = { path: "/feishu/plain", encryptKey: null } as const;
export function plainMessage(
  input: Omit<MessageInput, "appId" | "token">,
): Record<string, unknown> {
  return messageEvent({
    ...input,
    appId: TEST_FEISHU.plainAppId,
    token: TEST_FEISHU.plainVerificationToken,
  });
}

/** Tells the fake platform it holds user message `messageId` in `chatId` (so replies land there). */
export async function holdMessage(messageId: string, chatId: string): Promise<void> {
  await fetch(`${fakeFeishu()}/_control/message`, {
    method: "POST",
    body: JSON.stringify({ message_id: messageId, chat_id: chatId }),
  });
}

export async function control(path: string, body: Record<string, unknown> = {}): Promise<void> {
  await fetch(`${fakeFeishu()}/_control/${path}`, { method: "POST", body: JSON.stringify(body) });
}

export interface FakeFeishuMessage {
  /** Interactive messages showing a card entity: its current text is `text`, `streaming` its mode. */
  card_id?: string;
  streaming?: boolean;
  chat_id: string;
  text: string;
  msg_type: string;
  via: "create" | "reply";
  thread: boolean;
  reply_to?: string;
  message_id: string;
  uuid?: string;
}

export async function feishuMessages(chat: string): Promise<FakeFeishuMessage[]> {
  return (await (
    await fetch(`${fakeFeishu()}/_control/messages?chat=${chat}`)
  ).json()) as FakeFeishuMessage[];
}

export interface FakeFeishuCall {
  api: string;
  chat?: string;
  body: Record<string, unknown>;
  status: number;
  code: number;
  token: string;
}

export async function feishuCalls(api?: string, chat?: string): Promise<FakeFeishuCall[]> {
  const query = new URLSearchParams();
  if (api) query.set("api", api);
  if (chat) query.set("chat", chat);
  return (await (
    await fetch(`${fakeFeishu()}/_control/calls?${query}`)
  ).json()) as FakeFeishuCall[];
}

export { settle, waitFor } from "../wait.ts";
export const forgetPairingWhenDone = pairingForgetter("feishu");
