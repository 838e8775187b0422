import { env, SELF } from "cloudflare:test";
import { discordChannel } from "../../../functions/channels/discord/index.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import type { SocketAccount } from "../../../functions/channels/channel.ts";
import { findSocketAccount } from "../../../functions/channels/companion/socket-accounts.ts";
import type { DiscordAccount } from "../../../functions/channels/discord/config.ts";
import { TEST_DISCORD } from "../../../functions/channels/discord/test-fixtures.ts";
import { pairingForgetter, settle, waitFor } from "../wait.ts";
import { postCompanionEvent, storedOutcomes } from "../companion-events.ts";

export { TEST_DISCORD };
export { script as scriptModel, newScenario, recorded } from "../../agent/model-helpers.ts";

const testEnv = env as unknown as Record<string, unknown>;
export const fakeDiscord = () => String(testEnv.FAKE_DISCORD_URL);

const COMPANION_KEY = { id: "k1", secret: "test-companion-secret" };

/** A fresh snowflake-looking id (random: test files run in parallel, workerd's clock stands still). */
export function snowflake(): string {
  const bytes = crypto.getRandomValues(new Uint32Array(2));
  return String(1_400_000_000_000_000_000n + (BigInt(bytes[0]!) << 21n) + BigInt(bytes[1]! >>> 11));
}

export interface MessageSpec {
  id?: string;
  author: string;
  channelId: string;
  guildId?: string;
  content: string;
  bot?: boolean;
  mentions?: string[];
  mentionRoles?: string[];
  replyToAuthor?: string;
  channelContext?: { type: number; parent_id?: string };
  botRoleIds?: string[];
  /** The author's guild roles (member.roles). */
  roles?: string[];
  attachments?: Array<{ filename: string; url: string; size: number; content_type?: string }>;
}

/** A Gateway MESSAGE_CREATE dispatch as the companion forwards it. */
export function messageCreate(spec: MessageSpec) {
  const id = spec.id ?? snowflake();
  return {
    op: 0,
    t: "MESSAGE_CREATE",
    s: 1,
    d: {
      id,
      channel_id: spec.channelId,
      ...(spec.guildId
        ? { guild_id: spec.guildId, member: { nick: null, roles: spec.roles ?? [] } }
        : {}),
      author: {
        id: spec.author,
        username: `user${spec.author.slice(-4)}`,
        global_name: "Ada",
        ...(spec.bot ? { bot: true } : {}),
      },
      content: spec.content,
      type: spec.replyToAuthor ? 19 : 0,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      mentions: (spec.mentions ?? []).map((user) => ({ id: user, username: "x" })),
      mention_roles: spec.mentionRoles ?? [],
      mention_everyone: false,
      attachments: (spec.attachments ?? []).map((file) => ({ id: snowflake(), ...file })),
      ...(spec.replyToAuthor
        ? {
            referenced_message: {
              id: snowflake(),
              author: { id: spec.replyToAuthor, username: "y" },
            },
          }
        : {}),
    },
    ...(spec.channelContext || spec.botRoleIds
      ? {
          context: {
            ...(spec.channelContext
              ? { channel: { id: spec.channelId, ...spec.channelContext } }
              : {}),
            ...(spec.botRoleIds ? { botRoleIds: spec.botRoleIds } : {}),
          },
        }
      : {}),
  };
}

export function messageUpdate(spec: {
  id: string;
  author: string;
  channelId: string;
  guildId?: string;
  content: string;
  editedAt?: string;
}) {
  return {
    op: 0,
    t: "MESSAGE_UPDATE",
    s: 2,
    d: {
      id: spec.id,
      channel_id: spec.channelId,
      ...(spec.guildId ? { guild_id: spec.guildId } : {}),
      author: { id: spec.author, username: "x" },
      content: spec.content,
      edited_timestamp: spec.editedAt ?? new Date().toISOString(),
    },
  };
}

export function reactionAdd(spec: {
  user: string;
  channelId: string;
  messageId: string;
  guildId?: string;
  messageAuthor?: string;
  emoji?: string;
}) {
  return {
    op: 0,
    t: "MESSAGE_REACTION_ADD",
    s: 3,
    d: {
      user_id: spec.user,
      channel_id: spec.channelId,
      message_id: spec.messageId,
      ...(spec.guildId ? { guild_id: spec.guildId } : {}),
      message_author_id: spec.messageAuthor ?? TEST_DISCORD.botId,
      emoji: { id: null, name: spec.emoji ?? "👍" },
    },
  };
}

export function memberAdd(spec: { user: string; guildId: string }) {
  return {
    op: 0,
    t: "GUILD_MEMBER_ADD",
    s: 4,
    d: {
      guild_id: spec.guildId,
      user: { id: spec.user, username: "newbie" },
      joined_at: new Date().toISOString(),
    },
  };
}

/**
 * Hands one Gateway dispatch to the Worker as the companion does: a signed
 * `POST /internal/companion/events`, where the Discord channel's own socket parser turns it into
 * envelopes that are durably accepted. Returns the event's status and what each envelope became.
 */
export async function deliver(
  dispatch: unknown,
  accountId = "default",
): Promise<{ status: string; statuses: string[] }> {
  const result = await postCompanionEvent(COMPANION_KEY, "discord", accountId, {
    eventId: eventIdOf(dispatch),
    payload: dispatch,
  });
  return { status: result.status, statuses: storedOutcomes(result) };
}

/** The parse alone (drop reasons), through the channel's SocketPieces as the Worker calls them. */
export async function parseOnly(dispatch: unknown, accountId = "default") {
  const socket = discordChannel.socket!;
  const account = findSocketAccount(configFromEnv(env as never), testEnv, "discord", accountId)
    ?.account as SocketAccount<DiscordAccount> | undefined;
  if (!account) throw new Error(`no Discord socket account ${accountId}`);
  return socket.parse(
    { eventId: eventIdOf(dispatch), payload: dispatch, receivedAt: Date.now() },
    account,
    testEnv,
  );
}

function eventIdOf(dispatch: unknown): string {
  const d = (dispatch as { t?: string; d?: { id?: string; message_id?: string; user_id?: string } })
    .d;
  return `${(dispatch as { t?: string }).t}:${d?.id ?? d?.message_id ?? crypto.randomUUID()}:${d?.user_id ?? ""}`;
}

export interface FakeDiscordMessage {
  id: string;
  channel_id: string;
  author: { id: string };
  content: string;
  nonce?: string;
  flags?: number;
  message_reference?: { message_id: string };
  edits: number;
  deleted?: boolean;
}

export async function discordMessages(channelId: string): Promise<FakeDiscordMessage[]> {
  return (await (
    await fetch(`${fakeDiscord()}/_control/messages?channel_id=${channelId}`)
  ).json()) as FakeDiscordMessage[];
}

export async function interactionMessages(token: string): Promise<FakeDiscordMessage[]> {
  return (await (
    await fetch(`${fakeDiscord()}/_control/messages?interaction=${encodeURIComponent(token)}`)
  ).json()) as FakeDiscordMessage[];
}

export async function discordCalls(
  route?: string,
  channelId?: string,
): Promise<Array<{ route: string; body: Record<string, unknown>; at: number; token?: string }>> {
  const query = new URLSearchParams();
  if (route) query.set("route", route);
  if (channelId) query.set("channel_id", channelId);
  return (await (await fetch(`${fakeDiscord()}/_control/calls?${query}`)).json()) as Array<{
    route: string;
    body: Record<string, unknown>;
    at: number;
  }>;
}

export async function scriptDiscord(script: {
  route: string;
  channelId?: string;
  times?: number;
  status?: number;
  retryAfter?: number;
  global?: boolean;
  dropConnection?: boolean;
  dropBeforeCreate?: boolean;
}) {
  await fetch(`${fakeDiscord()}/_control/script`, { method: "POST", body: JSON.stringify(script) });
}

/** Puts a message in the fake's channel as if it had been created at `at` (ms). */
export async function seedDiscordMessage(message: {
  channelId: string;
  authorId: string;
  content: string;
  at: number;
}): Promise<string> {
  return (
    (await (
      await fetch(`${fakeDiscord()}/_control/seed`, {
        method: "POST",
        body: JSON.stringify(message),
      })
    ).json()) as { id: string }
  ).id;
}

/** Visible messages of a channel once they equal `texts`, checked again after a pause (no late extra). */
export async function settlesTo(channelId: string, texts: string[]): Promise<FakeDiscordMessage[]> {
  const visible = async () => (await discordMessages(channelId)).filter((m) => !m.deleted);
  await waitFor(
    async () =>
      JSON.stringify((await visible()).map((m) => m.content)) === JSON.stringify(texts)
        ? true
        : undefined,
    45_000,
  ).catch(async () => {
    throw new Error(
      `channel shows ${JSON.stringify((await visible()).map((m) => m.content))}, expected ${JSON.stringify(texts)}`,
    );
  });
  await settle(1500);
  return visible();
}

/** Signs an interaction body with the test application's Ed25519 key, as Discord does. */
export async function signInteraction(
  body: string,
  timestamp = Math.floor(Date.now() / 1000),
): Promise<Record<string, string>> {
  const pkcs8 = new Uint8Array(
    TEST_DISCORD.privateKeyPkcs8.match(/../g)!.map((h) => parseInt(h, 16)),
  );
  const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, ["sign"]);
  const signature = new Uint8Array(
    await crypto.subtle.sign(
      { name: "Ed25519" },
      key,
      new TextEncoder().encode(`${timestamp}${body}`),
    ),
  );
  return {
    "x-signature-ed25519": [...signature].map((b) => b.toString(16).padStart(2, "0")).join(""),
    "x-signature-timestamp": String(timestamp),
  };
}

export async function postInteraction(
  interaction: unknown,
  headers?: Record<string, string>,
): Promise<Response> {
  const body = JSON.stringify(interaction);
  return SELF.fetch("https://edgeclaw.test/discord/interactions", {
    method: "POST",
    headers: { "content-type": "application/json", ...(headers ?? (await signInteraction(body))) },
    body,
  });
}

export { settle, waitFor };
export const forgetPairingWhenDone = pairingForgetter("discord");
