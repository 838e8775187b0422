import { env, SELF } from "cloudflare:test";
import { TEST_GOOGLECHAT } from "../../../functions/channels/googlechat/test-fixtures.ts";
import { pairingForgetter } from "../wait.ts";

export { TEST_GOOGLECHAT };
export { script as scriptModel, newScenario } from "../../agent/model-helpers.ts";

export const fakeGoogle = () =>
  String((env as unknown as Record<string, unknown>).FAKE_GOOGLECHAT_URL);

let counter = 0;
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter}${Math.floor(Math.random() * 1e9).toString(36)}`;
}

export interface SignOptions {
  audienceType?: "app-url" | "project-number";
  audience?: string;
  email?: string;
  emailVerified?: boolean;
  issuer?: string;
  expiresInSeconds?: number;
  forged?: boolean;
}

/** A bearer token as Google Chat sends it (signed by the fake Google's published key, unless forged). */
export async function googleToken(options: SignOptions = {}): Promise<string> {
  const response = await fetch(`${fakeGoogle()}/_control/sign`, {
    method: "POST",
    body: JSON.stringify({
      audienceType: "app-url",
      audience: TEST_GOOGLECHAT.appUrlAudience,
      ...options,
    }),
  });
  return ((await response.json()) as { token: string }).token;
}

export interface ChatEventInput {
  type?: string;
  space: string;
  dm?: boolean;
  sender?: string;
  senderType?: "HUMAN" | "BOT";
  text?: string;
  messageId?: string;
  thread?: string;
  mentionBot?: boolean;
  extra?: Record<string, unknown>;
}

/** One interaction event as Google Chat posts it to an HTTP endpoint. */
export function chatEvent(input: ChatEventInput): Record<string, unknown> {
  const sender = {
    name: input.sender ?? TEST_GOOGLECHAT.owner,
    displayName: "Test User",
    type: input.senderType ?? "HUMAN",
  };
  const space = {
    name: input.space,
    type: input.dm ? "DM" : "ROOM",
    spaceType: input.dm ? "DIRECT_MESSAGE" : "SPACE",
    singleUserBotDm: input.dm ?? false,
  };
  const type = input.type ?? "MESSAGE";
  const text = input.text ?? "hello";
  const body: Record<string, unknown> = {
    type,
    eventTime: new Date().toISOString(),
    space,
    user: sender,
  };
  if (type === "MESSAGE") {
    const mention = `@edgeclaw `;
    body.message = {
      name: `${input.space}/messages/${input.messageId ?? uniqueId("m")}`,
      sender,
      text: input.mentionBot ? `${mention}${text}` : text,
      ...(input.mentionBot
        ? {
            argumentText: ` ${text}`,
            annotations: [
              {
                type: "USER_MENTION",
                startIndex: 0,
                length: mention.length - 1,
                userMention: {
                  user: { name: TEST_GOOGLECHAT.botUser, displayName: "edgeclaw", type: "BOT" },
                  type: "MENTION",
                },
              },
            ],
          }
        : {}),
      thread: { name: input.thread ?? `${input.space}/threads/${uniqueId("t")}` },
      space,
    };
  }
  return { ...body, ...input.extra };
}

export async function postChat(
  body: unknown,
  options: { token?: string | null; path?: string; raw?: string } = {},
): Promise<Response> {
  const token = options.token === undefined ? await googleToken() : options.token;
  return SELF.fetch(`https://edgeclaw.test${options.path ?? "/googlechat"}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: options.raw ?? JSON.stringify(body),
  });
}

export interface FakeChatMessage {
  name: string;
  text: string;
  thread: string;
  deleted: boolean;
  edits: number;
}

export async function chatMessages(space: string): Promise<FakeChatMessage[]> {
  const response = await fetch(
    `${fakeGoogle()}/_control/messages?space=${encodeURIComponent(space)}`,
  );
  return ((await response.json()) as { messages: FakeChatMessage[] }).messages;
}

export async function visibleTexts(space: string): Promise<string[]> {
  return (await chatMessages(space)).filter((m) => !m.deleted).map((m) => m.text);
}

export async function scriptGoogle(script: {
  api: "create" | "patch" | "token";
  space?: string;
  times?: number;
  status?: number;
  retryAfter?: number;
  dropConnection?: boolean;
  delayMs?: number;
}) {
  await fetch(`${fakeGoogle()}/_control/script`, { method: "POST", body: JSON.stringify(script) });
}

export async function chatCalls(
  api?: string,
): Promise<Array<{ api: string; path: string; body: unknown }>> {
  const response = await fetch(`${fakeGoogle()}/_control/calls${api ? `?api=${api}` : ""}`);
  return ((await response.json()) as { calls: Array<{ api: string; path: string; body: unknown }> })
    .calls;
}

export { settle, waitFor } from "../wait.ts";
export const forgetPairingWhenDone = pairingForgetter("googlechat");
