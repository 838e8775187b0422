import type { InboundEnvelope } from "../core/envelope.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import { defaultAgentId, knownAgentIds } from "./agents.ts";
import { matchBinding, type BindingTier, type RoutingFacts } from "./bindings.ts";
import { buildSessionKey, type DmScope } from "./session-key.ts";

/**
 * resolveAgentRoute(config, envelope[, facts]) — which agent answers and in which session.
 *
 * Integration contract: called by the Worker on the ack hot path for every inbound envelope, after
 * parsing and before `SessionDO.accept`. Pure and config-only (no Postgres, no I/O): bindings pick
 * the agent (functions/routing/bindings.ts), then the session key is built from `session.dmScope`
 * (or the matching binding's `session.dmScope`) and `session.identityLinks`.
 *
 * Returns `{ rejected }` only when `agents.ownership: "explicit"` is set and no binding matches
 * (an explicit fleet has no implicit default agent). Access control is NOT decided here: an event
 * that routes fine may still be dropped by decideAccess inside the SessionDO.
 */
export type RouteMatchedBy = BindingTier | "default";

export type AgentRoute = {
  agentId: string;
  sessionKey: string;
  matchedBy: RouteMatchedBy;
  dmScope: DmScope;
};
export type RouteResult = AgentRoute | { rejected: string };

export function resolveAgentRoute(
  config: EdgeclawConfig,
  envelope: InboundEnvelope,
  facts: RoutingFacts = {},
): RouteResult {
  const match = matchBinding(config, envelope, facts, knownAgentIds(config));
  if (!match && (config.agents as Record<string, unknown>).ownership === "explicit") {
    return {
      rejected: `no binding matches ${envelope.channel}/${envelope.accountId} ${envelope.chatType}:${envelope.peerId} and agents.ownership is "explicit"`,
    };
  }
  const agentId = match?.agentId ?? defaultAgentId(config);
  const dmScope = match?.binding.session?.dmScope ?? config.session.dmScope;
  const sessionKey = buildSessionKey({
    agentId,
    channel: envelope.channel,
    accountId: envelope.accountId,
    chatType: envelope.chatType,
    peerId: envelope.peerId,
    threadId: envelope.threadId,
    dmScope,
    identityLinks: config.session.identityLinks,
  });
  // A channel-chosen session (Slack slash commands) replaces the conversation-derived key.
  const scoped = envelope.sessionScope
    ? `agent:${agentId}:${envelope.sessionScope.toLowerCase()}`
    : sessionKey;
  return { agentId, sessionKey: scoped, matchedBy: match?.tier ?? "default", dmScope };
}

export function isRejected(result: RouteResult): result is { rejected: string } {
  return "rejected" in result;
}
