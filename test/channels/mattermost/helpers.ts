import { env } from "cloudflare:test";
import type { Env } from "../../../workers/env.ts";
import type { ParseResult } from "../../../functions/channels/channel.ts";
import { TEST_MATTERMOST } from "../../../functions/channels/mattermost/test-fixtures.ts";
import { pairingForgetter, settle, waitFor } from "../wait.ts";
import { parseSocketEvent, postCompanionEvent, storedOutcomes } from "../companion-events.ts";

/** The bot the fake Mattermost's token belongs to. (The fake itself is Node code; workerd tests only speak to it over HTTP.) */
export const FAKE_MATTERMOST_BOT = TEST_MATTERMOST.bot;

/** A post as the fake Mattermost stores it (functions/channels/mattermost/simulate/mattermost-api.ts). */
export interface FakeMattermostPost {
  id: string;
  create_at: number;
  edit_at: number;
  delete_at: number;
  user_id: string;
  channel_id: string;
  root_id: string;
  message: string;
  props: Record<string, unknown>;
}

export { newScenario, script as scriptModel, recorded } from "../../agent/model-helpers.ts";

export const workerEnv = env as unknown as Env;
const fake = () => String(workerEnv.FAKE_MATTERMOST_URL);

let counter = 0;
/** A Mattermost-shaped id (26 lowercase alphanumerics), unique per call. */
export function mmId(prefix = "x"): string {
  counter += 1;
  const body = `${prefix}${Date.now().toString(36)}${counter.toString(36)}${Math.floor(Math.random() * 1e9).toString(36)}`;
  return body
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "")
    .padEnd(26, "0")
    .slice(0, 26);
}

export function postedEvent(fields: {
  channelId: string;
  channelType: "D" | "G" | "O" | "P";
  userId: string;
  message: string;
  rootId?: string;
  postId?: string;
  mentionsBot?: boolean;
  senderName?: string;
}) {
  const post = {
    id: fields.postId ?? mmId("p"),
    create_at: Date.now(),
    update_at: Date.now(),
    edit_at: 0,
    delete_at: 0,
    user_id: fields.userId,
    channel_id: fields.channelId,
    root_id: fields.rootId ?? "",
    message: fields.message,
    type: "",
    props: {},
  };
  return {
    post,
    event: {
      event: "posted",
      data: {
        channel_display_name: "",
        channel_name: "",
        channel_type: fields.channelType,
        post: JSON.stringify(post),
        sender_name: `@${fields.senderName ?? "alice"}`,
        team_id: "team1",
        ...(fields.mentionsBot ? { mentions: JSON.stringify([FAKE_MATTERMOST_BOT.id]) } : {}),
      },
      broadcast: { omit_users: null, user_id: "", channel_id: fields.channelId, team_id: "" },
      seq: 7,
    },
  };
}

const COMPANION_KEY = { id: "sockmm", secret: "test-companion-sockmm-secret" };

/**
 * Hands one WebSocket event to the Worker as the companion's Mattermost connector does (the event
 * plus the bot's identity the connector learnt at connect): a signed POST /internal/companion/events,
 * where the channel's socket parser turns it into envelopes that are durably accepted. `parsed` is
 * the same parse run locally, so tests can read drop reasons.
 */
export async function deliver(
  accountId: string,
  event: unknown,
  channelType?: string,
): Promise<{ parsed: ParseResult; outcomes: Array<{ status: string }> }> {
  const payload = {
    event,
    self: { userId: FAKE_MATTERMOST_BOT.id, username: FAKE_MATTERMOST_BOT.username },
    ...(channelType ? { channelType } : {}),
  };
  const parsed = await parseSocketEvent(workerEnv, "mattermost", accountId, {
    eventId: "e",
    payload,
  });
  const result = await postCompanionEvent(COMPANION_KEY, "mattermost", accountId, {
    eventId: `e-${mmId("e")}`,
    payload,
  });
  if (parsed.kind === "malformed") return { parsed, outcomes: [] };
  return { parsed, outcomes: storedOutcomes(result).map((status) => ({ status })) };
}

export async function mattermostPosts(channelId: string): Promise<FakeMattermostPost[]> {
  return (await (
    await fetch(`${fake()}/_control/posts?channel=${channelId}`)
  ).json()) as FakeMattermostPost[];
}

export async function mattermostCalls(
  path: string,
): Promise<Array<{ method: string; path: string; body: Record<string, unknown> }>> {
  return (await (
    await fetch(`${fake()}/_control/calls?path=${encodeURIComponent(path)}`)
  ).json()) as Array<{ method: string; path: string; body: Record<string, unknown> }>;
}

export async function scriptMattermost(script: {
  method: string;
  path: string;
  times?: number;
  status?: number;
  dropConnection?: boolean;
}): Promise<void> {
  await fetch(`${fake()}/_control/script`, { method: "POST", body: JSON.stringify(script) });
}

export async function setChannelType(id: string, type: "D" | "G" | "O" | "P"): Promise<void> {
  await fetch(`${fake()}/_control/channel`, { method: "POST", body: JSON.stringify({ id, type }) });
}

/** Visible bot posts in a channel, once they have settled to `count`. */
export async function botPostsSettled(
  channelId: string,
  count: number,
): Promise<FakeMattermostPost[]> {
  const visible = async () =>
    (await mattermostPosts(channelId)).filter(
      (p) => p.user_id === FAKE_MATTERMOST_BOT.id && !p.delete_at,
    );
  await waitFor(async () => ((await visible()).length >= count ? true : undefined));
  await settle(1500);
  return visible();
}

export { settle, waitFor };
export const forgetPairingWhenDone = pairingForgetter("mattermost");
