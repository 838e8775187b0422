import { createLogger } from "../../../functions/logging/logger.ts";
import type { EdgeclawConfig } from "../../../functions/config/schema.ts";
import { adapterFor, HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { sendContextFor } from "../../../functions/channels/channel-account.ts";
import {
  decideAccess,
  OPERATOR_ACCESS,
  type AccessDecision,
} from "../../../functions/routing/access.ts";
import { postgresAccessStore } from "../../../functions/routing/access-store-postgres.ts";
import { configOnlyAccessStore } from "../../../functions/routing/access-store-config-only.ts";
import { withDb } from "../../../functions/db/client.ts";
import type { InboxRow } from "../storage.ts";
import type { TriageHost } from "./triage-host.ts";

/**
 * Who an accepted event's sender is to this conversation, for triage: the access decision (with
 * thread participation counted as a mention), what a sender who is turned away is told (nothing,
 * or "not authorized" where the platform keeps them waiting), the one log line per refusal
 * reason, and whether a sender may hear that triage failed.
 */

/** What a sender kept waiting by the platform is told when their event is turned away (OpenClaw: "not authorized"). */
export const NOT_AUTHORIZED_TEXT = "⛔ Not authorized: you cannot use this here.";

/**
 * Tells the operator's terminal why a conversation gets no reply: once per conversation and
 * reason (a busy group that is not allowlisted must not fill the log with a line per message).
 * The sender's text stays out of the line.
 */
export function logRefusalOnce(
  row: InboxRow,
  host: TriageHost,
  reason: string,
  configKey?: string,
) {
  const seen = `${reason}|${configKey ?? ""}`;
  if (host.store.meta.getJson("refusalLogged") === seen) return;
  host.store.meta.setJson("refusalLogged", seen);
  const { envelope } = row.event;
  createLogger(host.config, host.env as Record<string, unknown>, {
    sessionKey: row.event.sessionKey,
  }).warn("message refused by access policy; later refusals here are not logged", {
    channel: envelope.channel,
    chatType: envelope.chatType,
    reason,
    ...(configKey ? { configKey } : {}),
  });
}

/**
 * Ends an event that was turned away. Silent by default (a stranger must not make the bot speak);
 * a channel whose platform shows the sender a pending state until the bot answers names a private
 * route for the refusal (ChannelAdapter.refusalRoute), and it is sent there once.
 */
export function settleTurnedAway(row: InboxRow, host: TriageHost, now: number): void {
  const { envelope } = row.event;
  const route = HTTP_CHANNELS.has(envelope.channel)
    ? undefined
    : adapterFor(envelope.channel)?.refusalRoute?.(envelope.route);
  if (route) host.refuse(row, route, NOT_AUTHORIZED_TEXT);
  else host.store.inbox.settle(row.seq, null, now);
}

/** The access decision for the event's sender; web chat and the OpenAI API are the operator. */
export async function accessFor(row: InboxRow, host: TriageHost): Promise<AccessDecision> {
  const { agentId } = row.event;
  let { envelope } = row.event;
  // Web chat and the OpenAI API are authenticated by the gateway token: the caller is the operator.
  if (HTTP_CHANNELS.has(envelope.channel)) return OPERATOR_ACCESS;
  // Thread participation: in a thread the agent has already answered in, a follow-up counts as a
  // mention (mention gating only; sender and group allowlists still apply).
  if (
    envelope.threadId &&
    envelope.chatType !== "direct" &&
    !envelope.wasMentioned &&
    (await participatedInThread(row, host))
  ) {
    envelope = { ...envelope, wasMentioned: true };
  }
  return withDb(host.env, (db) =>
    decideAccess({
      config: host.config,
      envelope,
      store: postgresAccessStore(db),
      now: Date.now(),
      agentId,
    }),
  );
}

/**
 * May the sender of an event whose triage failed be told about it? Only when the configuration
 * alone admits them to this conversation (approvals and pairing live in Postgres, which is often
 * why triage failed). A stranger, or an unmentioned group message, must not make the bot speak —
 * not even to say that something went wrong.
 */
export async function senderMayHearOfFailure(
  row: InboxRow,
  config: EdgeclawConfig,
): Promise<boolean> {
  const { envelope, agentId } = row.event;
  if (HTTP_CHANNELS.has(envelope.channel)) return true;
  try {
    const decision = await decideAccess({
      config,
      envelope,
      store: configOnlyAccessStore(),
      now: Date.now(),
      agentId,
    });
    return decision.kind === "allow";
  } catch {
    return false;
  }
}

/** This session answered before, or the platform shows one of the agent's posts in the thread. */
async function participatedInThread(row: InboxRow, host: TriageHost): Promise<boolean> {
  if (host.store.runs.hasAnswered()) return true;
  const adapter = adapterFor(row.event.envelope.channel);
  if (!adapter?.participatedInThread) return false;
  try {
    const route = row.event.envelope.route;
    return await adapter.participatedInThread(
      route,
      sendContextFor(
        { env: host.env, config: host.config, signal: AbortSignal.timeout(10_000) },
        route,
      ),
    );
  } catch (error) {
    createLogger(
      host.config,
      host.env as Record<string, unknown>,
      { sessionKey: row.event.sessionKey },
      row.event.envelope.text ? [row.event.envelope.text] : [],
    ).warn("thread participation lookup failed; treating the message as unmentioned", { error });
    return false;
  }
}
