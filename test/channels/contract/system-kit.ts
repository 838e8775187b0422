import { runInDurableObject, SELF } from "cloudflare:test";
import { SessionStore } from "../../../durable-objects/session/storage.ts";
import type { InboxRow } from "../../../durable-objects/session/storage.ts";
import { signRequest } from "../../../functions/channels/companion/signature.ts";
import type { InboundEnvelope } from "../../../functions/core/envelope.ts";
import { channelDefinition } from "../../../functions/channels/registry.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import { findSocketAccount } from "../../../functions/channels/companion/socket-accounts.ts";
import { webhookRouteTable } from "../../../functions/channels/webhook-routes.ts";
import { decideAccess } from "../../../functions/routing/access.ts";
import { configOnlyAccessStore } from "../../../functions/routing/access-store-config-only.ts";
import { isRejected, resolveAgentRoute } from "../../../functions/routing/resolve-route.ts";
import { ORIGIN, post, workerEnv, type WireRequest } from "./kit.ts";

/**
 * What the system-event cross-check (system-events.test.ts) needs from a channel: for a few
 * conversations the suite's config governs, a message and every kind of system event the channel
 * parses, each from a sender the config lets in there and one it refuses. The suite then holds each
 * event to the message's decision — the same routing facts, the same session, the same access
 * answer — and delivers it through the Worker to see it kept as context (allowed) or dropped
 * (refused), never a run.
 */

/** One inbound event as it reaches the Worker: a webhook request, or a raw event the companion forwards. */
export type Delivery =
  | { via: "webhook"; request: WireRequest }
  | {
      via: "companion";
      /** The ingress key that speaks for this channel in the suite's config. */
      key: { id: string; secret: string };
      channel: string;
      accountId: string;
      eventId: string;
      payload: unknown;
    };

/** A system event of one kind from `sender`. */
export type EventBuilder = (sender: string) => Promise<Delivery>;

/**
 * A kind the platform sends from no user (a rename, the bot joining a group): the envelope names a
 * placeholder sender (Slack's "slack", LINE's "line"), and the event must get the decision a message
 * from that placeholder would.
 */
export interface SenderlessEvent {
  sender: string;
  build: () => Promise<Delivery>;
}

export interface Conversation {
  /** For people: "DM", "a team channel that admits only listed users". */
  name: string;
  /** A sender the config admits here (absent: it admits nobody), and one it refuses (absent: everybody gets in). */
  allowed?: string;
  refused?: string;
  /** An ordinary message from `sender` here (unmentioned: what a reaction or an edit stands beside). */
  message(sender: string): Promise<Delivery>;
  /** One builder per system-event kind the channel parses in this conversation. */
  events: Record<string, EventBuilder | SenderlessEvent>;
  /**
   * Kinds the channel parses here that cannot be held to the message, each with the reason (what the
   * platform leaves out of the event). system-events.test.ts lists them, so none is silently skipped.
   */
  exceptions?: Record<string, string>;
}

export interface SystemEventKit {
  /** The registry id (functions/channels/registry.ts). */
  channel: string;
  /** Every system-event kind the channel's parsers make; each must appear in some conversation. */
  kinds: readonly string[];
  conversations: Conversation[];
}

/** The channel's own parse of one delivery, as the Worker runs it (webhook: verify first; companion: the socket account). */
export async function parseDelivery(
  channel: string,
  delivery: Delivery,
): Promise<{ envelopes: InboundEnvelope[]; dropped: string[] }> {
  const definition = channelDefinition(channel);
  const env = workerEnv as unknown as Record<string, unknown>;
  const config = configFromEnv(workerEnv);
  if (delivery.via === "companion") {
    const socket = definition?.socket;
    if (!socket) throw new Error(`channel ${channel} has no companion half`);
    const account = findSocketAccount(config, env, channel, delivery.accountId)?.account;
    if (!account) throw new Error(`no ${channel} socket account ${delivery.accountId}`);
    const parsed = await socket.parse(
      { eventId: delivery.eventId, payload: delivery.payload, receivedAt: Date.now() },
      account,
      env,
    );
    if (parsed.kind !== "envelopes") throw new Error(`did not parse: ${JSON.stringify(parsed)}`);
    return { envelopes: parsed.envelopes, dropped: parsed.dropped ?? [] };
  }
  const webhook = definition?.webhook;
  if (!webhook) throw new Error(`channel ${channel} serves no webhook`);
  const { request } = delivery;
  const entry = webhookRouteTable(config).get(request.path);
  const route = entry?.definition.id === channel ? entry.route : undefined;
  if (!route) throw new Error(`channel ${channel} serves no webhook on ${request.path}`);
  const webhookRequest = {
    method: "POST",
    url: `${ORIGIN}${request.path}`,
    path: request.path,
    headers: new Headers(request.headers),
    raw: new TextEncoder().encode(request.body),
    receivedAt: Date.now(),
  };
  const verified = await webhook.verify(webhookRequest, route, env);
  if (!verified.ok) throw new Error(`did not verify: ${verified.reason}`);
  const parsed = await webhook.parse(webhookRequest, route, env);
  if (parsed.kind !== "envelopes") throw new Error(`did not parse: ${JSON.stringify(parsed)}`);
  return { envelopes: parsed.envelopes, dropped: parsed.dropped ?? [] };
}

/** Where an envelope goes (the Worker's routing) and what the SessionDO's access check says of it, from the config alone. */
export async function judge(
  envelope: InboundEnvelope,
): Promise<{ sessionKey?: string; admitted: boolean; why: string }> {
  const config = configFromEnv(workerEnv);
  const routed = resolveAgentRoute(config, envelope, { senderRoles: envelope.senderRoles });
  if (isRejected(routed)) return { admitted: false, why: `unrouted: ${routed.rejected}` };
  const decision = await decideAccess({
    config,
    envelope,
    store: configOnlyAccessStore(),
    now: Date.now(),
    agentId: routed.agentId,
  });
  // An unmentioned group message kept as history was let into the conversation: its events are context.
  const admitted = decision.kind === "allow" || decision.kind === "history-only";
  return {
    sessionKey: routed.sessionKey,
    admitted,
    why: decision.kind === "drop" ? `drop: ${decision.reason}` : decision.kind,
  };
}

/** The facts access and routing read from an envelope; a system event must carry its message's. */
export function routingFacts(envelope: InboundEnvelope) {
  return {
    channel: envelope.channel,
    accountId: envelope.accountId,
    chatType: envelope.chatType,
    peerId: envelope.peerId,
    parentPeerId: envelope.parentPeerId,
    threadId: envelope.threadId,
    teamId: envelope.teamId,
    senderId: envelope.senderId,
    senderIsBot: envelope.senderIsBot === true,
    senderRoles: [...(envelope.senderRoles ?? [])].sort(),
  };
}

/** Hands the delivery to the Worker as the platform (or the companion) would; 200 expected. */
export async function deliver(delivery: Delivery): Promise<Response> {
  if (delivery.via === "webhook") return post(delivery.request);
  const body = JSON.stringify({
    channel: delivery.channel,
    accountId: delivery.accountId,
    events: [{ eventId: delivery.eventId, payload: delivery.payload, receivedAt: Date.now() }],
  });
  const headers = await signRequest(delivery.key, {
    method: "POST",
    path: "/internal/companion/events",
    body: new TextEncoder().encode(body),
    timestamp: Math.floor(Date.now() / 1000),
  });
  return SELF.fetch(`${ORIGIN}/internal/companion/events`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

/** Empties the session's queue of system-event lines, so what one delivery adds (or not) is what is read after it. */
export function clearQueued(sessionKey: string): Promise<void> {
  const sessions = workerEnv.SESSIONS;
  return runInDurableObject(sessions.get(sessions.idFromName(sessionKey)), (_instance, state) => {
    new SessionStore(state.storage.sql).meta.delete("systemEvents");
  });
}

/** An event's inbox row and the session's queued system-event lines, read inside the SessionDO. */
export function sessionView(
  sessionKey: string,
  dedupKey: string,
): Promise<{ row?: InboxRow; queued: string[] }> {
  const sessions = workerEnv.SESSIONS;
  return runInDurableObject(sessions.get(sessions.idFromName(sessionKey)), (_instance, state) => {
    const store = new SessionStore(state.storage.sql);
    return {
      row: store.inbox.byKey(dedupKey),
      queued: (store.meta.getJson("systemEvents") ?? []).map((event) => event.text),
    };
  });
}
