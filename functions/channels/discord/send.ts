import type { OutboundMessage, ReconcileResult, SendContext, SendResult } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { commitPreview, retractPreview } from "../preview-stream.ts";
import {
  discordApiBase,
  discordBotToken,
  discordBotUserId,
  type DiscordAccount,
} from "./config.ts";
import { discordRequest, sendResultFromFailure, snowflakeAt, type DiscordCall } from "./rest.ts";
import {
  isPrivateNoticeRoute,
  liveInteraction,
  reconcilePrivateNotice,
  sendPrivateNotice,
} from "./interaction-webhook.ts";

/**
 * One reply chunk out to Discord REST (`POST /channels/{id}/messages`; chunks of at most
 * `textChunkLimit`, 2000, cut by the outbox). Never retries on its own: the outbox waits out a 429's
 * `retry_after` and retries 5xx.
 *
 * - Every post carries a `nonce` derived from the outbox chunk id with `enforce_nonce: true`: Discord
 *   then answers a repeat within its window with the message it already created instead of a
 *   second one. Beyond that window `reconcile` reads the channel's recent messages.
 * - `replyToMode` (default off) adds `message_reference` to the first / every chunk.
 * - A live preview (`progressState.previewMessageId`, streaming partial/block) is edited into the
 *   first chunk (PATCH) instead of posting a second message; `retract` deletes it and posts nothing.
 * - A slash command's answer (route.extra.interactionToken) finishes the deferred response
 *   (`PATCH /webhooks/{app}/{token}/messages/@original`), further chunks are follow-ups; once the
 *   token's 15 minutes are over the answer goes to the channel instead. A refusal, and anything on a
 *   click's route, goes only through the interaction webhook, privately (interaction-webhook.ts).
 * - `allowed_mentions` admits user pings only: a model echoing `@everyone` from untrusted text pings nobody.
 */

export interface DiscordTarget {
  account: DiscordAccount;
  token?: string;
  botUserId?: string;
  call: DiscordCall;
}

/** The account the pipeline resolved for the call (the route's), with its token and API base. */
export function discordTarget(ctx: SendContext<DiscordAccount>): DiscordTarget | undefined {
  const account = ctx.account;
  if (!account) return undefined;
  const token = discordBotToken(account, ctx.env);
  return {
    account,
    token,
    botUserId: discordBotUserId(token, account),
    call: { base: discordApiBase(account), token, signal: ctx.signal },
  };
}

const SUPPRESS_EMBEDS = 1 << 2;
const EPHEMERAL = 1 << 6;
const ALLOWED_MENTIONS = { parse: ["users"], replied_user: false };

export async function sendDiscordMessage(
  message: OutboundMessage,
  ctx: SendContext<DiscordAccount>,
): Promise<SendResult> {
  const { route } = message;
  const target = discordTarget(ctx);
  if (!target) return { ok: false, retryable: false, error: "channels.discord is not configured" };
  const state = message.progressState ?? {};
  const interaction = liveInteraction(route);

  if (message.retract) {
    if (!target.token) return { ok: true };
    return retractPreview([state.previewMessageId], async (id) => {
      const removed = await discordRequest(
        target.call,
        "DELETE",
        `/channels/${state.previewChannelId ?? route.to}/messages/${id}`,
      );
      return removed.ok || (removed.kind === "refused" && removed.status === 404)
        ? { ok: true }
        : sendResultFromFailure(removed);
    });
  }
  const flags = target.account.suppressEmbeds ? SUPPRESS_EMBEDS : 0;
  const content = {
    content: message.text,
    allowed_mentions: ALLOWED_MENTIONS,
    ...(flags ? { flags } : {}),
  };
  if (isPrivateNoticeRoute(route))
    return sendPrivateNotice(route, content, flags, target.call.base, ctx.signal);

  if (interaction) {
    const call = { ...target.call, token: undefined };
    const base = `/webhooks/${interaction.applicationId}/${interaction.token}`;
    const sent =
      message.chunkIndex === 0
        ? await discordRequest<{ id: string }>(call, "PATCH", `${base}/messages/@original`, content)
        : await discordRequest<{ id: string }>(call, "POST", `${base}?wait=true`, {
            ...content,
            flags: flags | (interaction.ephemeral ? EPHEMERAL : 0),
          });
    return sent.ok ? { ok: true, platformMessageId: sent.result.id } : sendResultFromFailure(sent);
  }

  if (!target.token)
    return {
      ok: false,
      retryable: false,
      error: `no Discord bot token for account ${route.accountId}`,
    };
  return commitPreview({
    previewId: message.chunkIndex === 0 ? state.previewMessageId : undefined,
    edit: async (previewId) => {
      const edited = await discordRequest<{ id: string }>(
        target.call,
        "PATCH",
        `/channels/${state.previewChannelId ?? route.to}/messages/${previewId}`,
        content,
      );
      if (edited.ok) return { ok: true };
      if (edited.kind === "lost" || edited.status === 429 || edited.status >= 500)
        return sendResultFromFailure(edited);
      return "gone"; // deleted by a moderator, …: post the chunk instead.
    },
    post: async () => {
      const body = {
        ...content,
        nonce: await nonceOf(message),
        enforce_nonce: true,
        ...referenceFor(route, target.account, message.chunkIndex),
      };
      const sent = await discordRequest<{ id: string }>(
        target.call,
        "POST",
        `/channels/${route.to}/messages`,
        body,
      );
      return sent.ok
        ? { ok: true, platformMessageId: sent.result.id }
        : sendResultFromFailure(sent);
    },
  });
}

/**
 * Discord drops a repeat of a nonce sent with `enforce_nonce` for "a few minutes" (it answers with the
 * message already created); a minute is well inside that.
 */
export const DISCORD_NONCE_WINDOW_MS = 60_000;
/** Discord's clock against ours when reading history back to a chunk's first attempt. */
const CLOCK_SKEW_MS = 2_000;

/**
 * Did an attempt whose answer was lost reach Discord?
 * - Within the nonce window of the chunk's first attempt: the outbox simply sends it again with the
 *   same nonce — Discord answers a repeat with the message it already created, so this is exact.
 * - Past it: the channel's history is read from the first attempt on (Discord stores no nonce, so
 *   history shows only the text) for the bot's own message with this text. An identical message the
 *   bot sent before this chunk was first sent is older than that and is never taken for it (only one
 *   sent within the clock-skew margin before it could be).
 * An interaction's answer edits one message (harmless to repeat); its follow-ups cannot be looked
 * up (ephemeral ones are invisible in history) and are not repeated.
 */
export async function reconcileDiscordMessage(
  message: OutboundMessage,
  ctx: SendContext<DiscordAccount>,
): Promise<ReconcileResult> {
  const { route } = message;
  if (message.retract)
    return { outcome: "untraceable", reason: "a retract only deletes", idempotent: true };
  if (message.chunkIndex === 0 && message.progressState?.previewMessageId)
    return {
      outcome: "untraceable",
      reason: "the answer edits the run's preview",
      idempotent: true,
    };
  if (isPrivateNoticeRoute(route)) return reconcilePrivateNotice(route);
  if (liveInteraction(route)) {
    // A file always goes as a follow-up (send-file.ts), never as the edit of the response.
    if (message.chunkIndex === 0 && !message.file)
      return {
        outcome: "untraceable",
        reason: "the answer edits the interaction's response",
        idempotent: true,
      };
    return {
      outcome: "untraceable",
      reason: "interaction follow-ups cannot be looked up",
      idempotent: false,
    };
  }
  // A row from before first attempts were recorded: its queued time is earlier still, so just as safe.
  const firstAttempt = message.firstAttemptAt ?? message.queuedAt;
  if (firstAttempt !== undefined && Date.now() - firstAttempt < DISCORD_NONCE_WINDOW_MS) {
    return {
      outcome: "untraceable",
      reason: "a repeat within the nonce window returns the message already created",
      idempotent: true,
    };
  }
  const target = discordTarget(ctx);
  if (!target?.token || !target.botUserId)
    throw new Error("cannot read Discord history without a bot token");
  const after = snowflakeAt((firstAttempt ?? Date.now() - 15 * 60_000) - CLOCK_SKEW_MS);
  const history = await discordRequest<
    Array<{
      id: string;
      author?: { id?: string };
      nonce?: string | number;
      content?: string;
      attachments?: Array<{ filename?: string }>;
    }>
  >(target.call, "GET", `/channels/${route.to}/messages?after=${after}&limit=100`);
  if (!history.ok)
    throw new Error(
      `reading Discord history failed: ${history.kind === "lost" ? history.error : `${history.status} ${history.message}`}`,
    );
  const nonce = await nonceOf(message);
  const mine = (Array.isArray(history.result) ? history.result : []).find(
    (m) =>
      m.author?.id === target.botUserId &&
      (String(m.nonce ?? "") === nonce ||
        // A file row is found by its attachment (its caption may be empty); a text chunk by its text.
        (message.file
          ? (m.attachments ?? []).some((a) => a.filename === message.file!.name) &&
            (m.content ?? "") === message.text
          : m.content === message.text)),
  );
  return mine ? { outcome: "landed", platformMessageId: mine.id } : { outcome: "missing" };
}

/**
 * A chunk's nonce (Discord takes at most 25 characters: SHA-256, hex, cut to 25). Discord compares
 * nonces per author, and a chunk id alone is unique only within its session (`notice:<seq>:0`), so
 * the channel and the message being answered go in too: another session's notice never matches.
 */
export async function nonceOf(message: Pick<OutboundMessage, "id" | "route">): Promise<string> {
  const seed = `${message.id}@${message.route.to}/${message.route.replyToMessageId ?? ""}`;
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(seed)),
  );
  return [...digest]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 25);
}

export function referenceFor(
  route: ReplyRoute,
  account: DiscordAccount,
  chunkIndex: number,
): { message_reference?: { message_id: string; fail_if_not_exists: false } } {
  if (!route.replyToMessageId) return {};
  const reference = {
    message_reference: { message_id: route.replyToMessageId, fail_if_not_exists: false as const },
  };
  switch (account.replyToMode) {
    case "off":
      return {};
    case "first":
      return chunkIndex === 0 ? reference : {};
    case "all":
      return reference;
    case "batched":
      return route.extra?.batched === "true" ? reference : {};
  }
}
