import { env, SELF } from "cloudflare:test";
import type { Env } from "../../../workers/env.ts";
import { withDb } from "../../../functions/db/client.ts";
import { postgresAccessStore } from "../../../functions/routing/access-store-postgres.ts";
import { TEST_MSTEAMS } from "../../../functions/channels/msteams/test-fixtures.ts";
import { pairingForgetter } from "../wait.ts";

export { TEST_MSTEAMS };
export { script as scriptModel, newScenario } from "../../agent/model-helpers.ts";

export const fakeTeams = () => String((env as unknown as Record<string, unknown>).FAKE_MSTEAMS_URL);

let counter = 0;
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter}${Math.floor(Math.random() * 1e9).toString(36)}`;
}

export interface SignOptions {
  audience?: string;
  serviceUrl?: string;
  issuer?: string;
  expiresInSeconds?: number;
  forged?: boolean;
  kid?: string;
  entraTenant?: string;
  tid?: string;
  noServiceUrl?: boolean;
}

/** A bearer token as the Bot Framework sends it (signed by the fake's published key, unless forged). */
export async function teamsToken(options: SignOptions = {}): Promise<string> {
  const response = await fetch(`${fakeTeams()}/_control/sign`, {
    method: "POST",
    body: JSON.stringify({ serviceUrl: fakeTeams(), ...options }),
  });
  return ((await response.json()) as { token: string }).token;
}

export interface ActivityInput {
  type?: string;
  kind: "personal" | "groupChat" | "channel";
  conversation: string;
  sender?: string;
  text?: string;
  id?: string;
  mentionBot?: boolean;
  serviceUrl?: string;
  extra?: Record<string, unknown>;
}

const BOT_ID = `28:${TEST_MSTEAMS.appId}`;

/** One activity as the Bot Framework posts it to the messaging endpoint. */
export function activity(input: ActivityInput): Record<string, unknown> {
  const aad = input.sender ?? TEST_MSTEAMS.owner;
  const text = input.text ?? "hello";
  return {
    type: input.type ?? "message",
    id: input.id ?? uniqueId("1"),
    timestamp: new Date().toISOString(),
    serviceUrl: input.serviceUrl ?? fakeTeams(),
    channelId: "msteams",
    from: { id: `29:${aad}`, name: "Test User", aadObjectId: aad },
    recipient: { id: BOT_ID, name: "edgeclaw" },
    conversation: {
      id: input.conversation,
      conversationType: input.kind,
      tenantId: TEST_MSTEAMS.tenantId,
      ...(input.kind === "personal" ? {} : { isGroup: true }),
    },
    text: input.mentionBot ? `<at>edgeclaw</at> ${text}` : text,
    textFormat: "plain",
    ...(input.mentionBot
      ? {
          entities: [
            {
              type: "mention",
              text: "<at>edgeclaw</at>",
              mentioned: { id: BOT_ID, name: "edgeclaw" },
            },
          ],
        }
      : {}),
    channelData: { tenant: { id: TEST_MSTEAMS.tenantId } },
    ...input.extra,
  };
}

export async function postTeams(
  body: unknown,
  options: { token?: string | null; raw?: string; path?: string } = {},
): Promise<Response> {
  const token = options.token === undefined ? await teamsToken() : options.token;
  return SELF.fetch(`https://edgeclaw.test${options.path ?? "/api/messages"}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: options.raw ?? JSON.stringify(body),
  });
}

export interface FakeActivity {
  id: string;
  conversation: string;
  type: string;
  text?: string;
  streamId?: string;
  streamType?: string;
  streamSequence?: number;
  updates?: number;
  deleted?: boolean;
}

export async function teamsActivities(conversation: string): Promise<FakeActivity[]> {
  const response = await fetch(
    `${fakeTeams()}/_control/activities?conversation=${encodeURIComponent(conversation)}`,
  );
  return ((await response.json()) as { activities: FakeActivity[] }).activities;
}

export async function messageTexts(conversation: string): Promise<string[]> {
  return (await teamsActivities(conversation))
    .filter((a) => a.type === "message" && !a.deleted)
    .map((a) => a.text ?? "");
}

export async function scriptTeams(script: {
  api: "send" | "token" | "stream" | "final" | "update" | "delete";
  times?: number;
  status?: number;
  retryAfter?: number;
  drop?: boolean;
  conversation?: string;
}) {
  await fetch(`${fakeTeams()}/_control/script`, { method: "POST", body: JSON.stringify(script) });
}

export async function approve(senderId: string) {
  await withDb(env as unknown as Env, (db) =>
    postgresAccessStore(db).addApprovedSender(
      { channel: "msteams", accountId: "default", senderId, source: "admin" },
      Date.now(),
    ),
  );
}

export { settle, waitFor } from "../wait.ts";
export const forgetPairingWhenDone = pairingForgetter("msteams");
