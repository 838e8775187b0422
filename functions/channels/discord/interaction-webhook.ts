import type { ReconcileResult, SendResult } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { discordRequest, sendResultFromFailure, type DiscordCall } from "./rest.ts";

/**
 * The interaction webhook (`/webhooks/{application}/{interaction token}`, no bot token): what the
 * route of a slash command or a click carries (interactions.ts), and the refusal sent through it.
 *
 * A refusal is seen by the sender alone, and never lands anywhere else:
 * - a command deferred ephemerally (the default): its "thinking…" is edited into the refusal;
 * - a command deferred publicly (`slashCommand.ephemeral: false`): the public "thinking…" is deleted
 *   and the refusal follows as an ephemeral follow-up (Discord gives a deferral's first follow-up the
 *   deferral's visibility; once the original is gone the follow-up keeps its own flags);
 * - a click (deferred update, type 6): an ephemeral follow-up. Its `@original` is the message the
 *   button sits on, the bot's own: a stranger's click must never edit it.
 * Once the token's 15 minutes are over nothing is sent: a refusal never goes to the channel.
 */

const EPHEMERAL = 1 << 6;

export interface LiveInteraction {
  applicationId: string;
  token: string;
  ephemeral: boolean;
  /** A component click acknowledged with a deferred update: `@original` is the clicked message. */
  deferredUpdate: boolean;
}

/** An interaction token, while it is still good (15 minutes from the interaction). */
export function liveInteraction(route: ReplyRoute, now = Date.now()): LiveInteraction | undefined {
  const extra = route.extra;
  if (!extra?.interactionToken || !extra.applicationId) return undefined;
  if (Number(extra.interactionExpiresAt ?? 0) <= now) return undefined;
  return {
    applicationId: extra.applicationId,
    token: extra.interactionToken,
    ephemeral: extra.ephemeral === "1",
    deferredUpdate: extra.deferredUpdate === "1",
  };
}

/** Only the interaction's own webhook may carry what is sent on this route (a refusal, anything on a click). */
export function isPrivateNoticeRoute(route: ReplyRoute): boolean {
  return route.extra?.refusal === "1" || route.extra?.deferredUpdate === "1";
}

/** ChannelAdapter.refusalRoute: an interaction still waiting for its answer is told; anything else stays silent. */
export function discordRefusalRoute(route: ReplyRoute): ReplyRoute | undefined {
  if (!liveInteraction(route)) return undefined;
  return { ...route, extra: { ...route.extra, refusal: "1" } };
}

export async function sendPrivateNotice(
  route: ReplyRoute,
  content: Record<string, unknown>,
  flags: number,
  base: string,
  signal?: AbortSignal,
): Promise<SendResult> {
  const interaction = liveInteraction(route);
  if (!interaction)
    return {
      ok: false,
      retryable: false,
      error: "the interaction token expired; a private notice is never posted to the channel",
    };
  const call: DiscordCall = { base, signal };
  const hook = `/webhooks/${interaction.applicationId}/${interaction.token}`;
  if (!interaction.deferredUpdate && interaction.ephemeral) {
    const edited = await discordRequest<{ id: string }>(
      call,
      "PATCH",
      `${hook}/messages/@original`,
      content,
    );
    return edited.ok
      ? { ok: true, platformMessageId: edited.result.id }
      : sendResultFromFailure(edited);
  }
  if (!interaction.deferredUpdate) {
    const removed = await discordRequest(call, "DELETE", `${hook}/messages/@original`);
    // Deleting twice is harmless (404 the second time), so a lost answer is simply tried again.
    if (!removed.ok && removed.kind === "lost")
      return { ok: false, retryable: true, error: removed.error };
    if (!removed.ok && removed.status !== 404) return sendResultFromFailure(removed);
  }
  const posted = await discordRequest<{ id: string }>(call, "POST", `${hook}?wait=true`, {
    ...content,
    flags: flags | EPHEMERAL,
  });
  return posted.ok
    ? { ok: true, platformMessageId: posted.result.id }
    : sendResultFromFailure(posted);
}

/** A private notice whose answer was lost: an edit of `@original` may be repeated; a follow-up cannot be looked up. */
export function reconcilePrivateNotice(route: ReplyRoute): ReconcileResult {
  const editsOriginal = route.extra?.deferredUpdate !== "1" && route.extra?.ephemeral === "1";
  return editsOriginal
    ? {
        outcome: "untraceable",
        reason: "the notice edits the interaction's response",
        idempotent: true,
      }
    : {
        outcome: "untraceable",
        reason: "an ephemeral follow-up cannot be looked up",
        idempotent: false,
      };
}
