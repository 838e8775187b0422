import { env, runInDurableObject, SELF } from "cloudflare:test";
import { SessionStore } from "../../../durable-objects/session/storage.ts";
import type { WebhookRequest } from "../../../functions/channels/channel.ts";
import { channelDefinition } from "../../../functions/channels/registry.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import { webhookRouteTable } from "../../../functions/channels/webhook-routes.ts";
import { isRejected, resolveAgentRoute } from "../../../functions/routing/resolve-route.ts";
import type { Env } from "../../../workers/env.ts";

/**
 * What the contract suite needs from a channel to run every case against it: how the platform's
 * request looks on the wire (signed, forged, stale, malformed) and what the fake platform received.
 * Each kit builds on the channel's own test helpers (test/channels/<ch>/helpers.ts) and fakes;
 * the suite itself only talks to the registry (functions/channels/registry.ts) and the Worker.
 */

export const ORIGIN = "https://edgeclaw.test";
export const workerEnv = env as unknown as Env;

/** One HTTP request exactly as the platform would send it (bytes the signature covers). */
export interface WireRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A direct message on the wire, and where the fake platform keeps what the bot answers there. */
export interface KitMessage {
  request: WireRequest;
  /** The fake's conversation key for `replies` (a DM channel, chat id, phone number, space…). */
  conversation: string;
  senderId: string;
  accountId: string;
}

/** A refused request and its well-formed twin (the suite parses the twin to learn where it would land). */
export interface RefusedRequest {
  request: WireRequest;
  twin: WireRequest;
}

/** The contract's cases, by name (exceptions name one of these). */
export type ContractCase =
  | "forged"
  | "stale"
  | "oversized"
  | "malformed"
  | "duplicate"
  | "stranger"
  | "system-events"
  | "first-notices"
  | "crash-mid-send";

/**
 * A case a channel cannot meet today, with the reason. The suite lists every one
 * (exceptions.test.ts) and, where `insteadStatus` is set, checks that status with "nothing
 * stored, no model call" — so no case is silently skipped.
 */
export interface ContractException {
  reason: string;
  insteadStatus?: number;
}

export interface ChannelKit {
  /** The registry id (functions/channels/registry.ts). */
  channel: string;
  /** A DM carrying `text`: "allowed" is let in by the suite's config, "stranger" meets pairing. */
  dm(who: "allowed" | "stranger", text: string): Promise<KitMessage>;
  /** The allowed DM with a wrong signature / token / key. */
  forged(text: string): Promise<RefusedRequest>;
  /** The allowed DM signed long ago (an expired token, a timestamp outside the window); absent when the platform signs no time. */
  stale?(text: string): Promise<RefusedRequest>;
  /** The allowed DM, validly signed, padded (whitespace, an unused form field) past `bytes`. */
  oversized(text: string, bytes: number): Promise<RefusedRequest>;
  /** A validly signed body that is not the platform's shape. */
  malformed(): Promise<WireRequest>;
  /** The texts the fake platform holds for `conversation`, oldest first. */
  replies(conversation: string): Promise<string[]>;
  /** Cases this channel cannot meet today, and why. */
  exceptions?: Partial<Record<ContractCase, ContractException>>;
}

export function post(request: WireRequest): Promise<Response> {
  return SELF.fetch(`${ORIGIN}${request.path}`, {
    method: "POST",
    headers: request.headers,
    body: request.body,
  });
}

/** The channel's webhook route for `path`, from the registry and the suite's config. */
export function routeFor(channel: string, path: string) {
  const webhook = channelDefinition(channel)?.webhook;
  if (!webhook) throw new Error(`channel ${channel} serves no webhook`);
  const entry = webhookRouteTable(configFromEnv(workerEnv)).get(path);
  const route = entry?.definition.id === channel ? entry.route : undefined;
  if (!route) throw new Error(`channel ${channel} serves no webhook on ${path}`);
  return { webhook, route };
}

export function maxBodyBytes(channel: string, path: string): number {
  const { webhook, route } = routeFor(channel, path);
  return webhook.maxBodyBytes(route);
}

/**
 * Where each event of a well-formed request would be stored: the channel's own parse (as the
 * Worker runs it) and the config's routing, so "nothing stored" is checked in the right session.
 */
export async function landingOf(
  channel: string,
  request: WireRequest,
): Promise<Array<{ dedupKey: string; sessionKey: string }>> {
  const { webhook, route } = routeFor(channel, request.path);
  const webhookRequest: WebhookRequest = {
    method: "POST",
    url: `${ORIGIN}${request.path}`,
    path: request.path,
    headers: new Headers(request.headers),
    raw: new TextEncoder().encode(request.body),
    receivedAt: Date.now(),
  };
  // Verify first, as the Worker does (Feishu hands parse the body its verify decrypted).
  const verified = await webhook.verify(webhookRequest, route, workerEnv);
  if (!verified.ok) throw new Error(`the twin did not verify: ${verified.reason}`);
  const parsed = await webhook.parse(webhookRequest, route, workerEnv);
  if (parsed.kind !== "envelopes")
    throw new Error(`the twin did not parse: ${JSON.stringify(parsed)}`);
  const config = configFromEnv(workerEnv);
  return parsed.envelopes.flatMap((envelope) => {
    const routed = resolveAgentRoute(config, envelope, { senderRoles: envelope.senderRoles });
    return isRejected(routed)
      ? []
      : [{ dedupKey: envelope.dedupKey, sessionKey: routed.sessionKey }];
  });
}

export function inboxState(sessionKey: string, dedupKey: string): Promise<string | undefined> {
  const sessions = workerEnv.SESSIONS;
  return runInDurableObject(
    sessions.get(sessions.idFromName(sessionKey)),
    async (_instance, state) => new SessionStore(state.storage.sql).inbox.byKey(dedupKey)?.state,
  );
}
