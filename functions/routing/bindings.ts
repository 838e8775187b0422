import type { InboundEnvelope } from "../core/envelope.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import { defaultAccountId } from "./accounts.ts";
import type { Binding } from "../config/routing-keys.ts";
import { normalizeAccountId, normalizeAgentId, normalizeToken } from "./ids.ts";

/**
 * Agent selection by `bindings`, in OpenClaw's documented tier order (first tier with a match wins;
 * inside a tier, config order):
 *   1 exact peer → 2 parent peer (thread inheritance) → 3 peer `"*"` → 4 guild + roles → 5 guild →
 *   6 team → 7 account (an omitted accountId means the default account) → 8 `accountId: "*"`.
 * Every field a binding sets must match (AND). Tier 9, the default agent, is the caller's.
 */
export type BindingTier =
  | "binding.peer"
  | "binding.peer.parent"
  | "binding.peer.wildcard"
  | "binding.guild+roles"
  | "binding.guild"
  | "binding.team"
  | "binding.account"
  | "binding.channel";

const TIER_ORDER: BindingTier[] = [
  "binding.peer",
  "binding.peer.parent",
  "binding.peer.wildcard",
  "binding.guild+roles",
  "binding.guild",
  "binding.team",
  "binding.account",
  "binding.channel",
];

/** Routing facts beyond the envelope: Discord member roles, when the channel knows them. */
export interface RoutingFacts {
  senderRoles?: string[];
}

export interface BindingMatch {
  binding: Binding;
  agentId: string;
  tier: BindingTier;
}

export function matchBinding(
  config: EdgeclawConfig,
  envelope: InboundEnvelope,
  facts: RoutingFacts = {},
  knownAgents?: Set<string>,
): BindingMatch | undefined {
  const candidates = config.bindings.filter(
    (binding) =>
      binding.type === "route" &&
      normalizeToken(binding.match.channel) === normalizeToken(envelope.channel) &&
      (!knownAgents || knownAgents.has(normalizeAgentId(binding.agentId))),
  );
  for (const tier of TIER_ORDER) {
    for (const binding of candidates) {
      if (
        tierOf(binding) !== tier &&
        !(tier === "binding.peer.parent" && tierOf(binding) === "binding.peer")
      )
        continue;
      if (matches(config, binding, envelope, facts, tier)) {
        return { binding, agentId: normalizeAgentId(binding.agentId), tier };
      }
    }
  }
  return undefined;
}

/** The most specific field a binding sets decides its tier. */
function tierOf(binding: Binding): BindingTier {
  const match = binding.match;
  if (match.peer) return match.peer.id === "*" ? "binding.peer.wildcard" : "binding.peer";
  if (match.guildId && match.roles) return "binding.guild+roles";
  if (match.guildId) return "binding.guild";
  if (match.teamId) return "binding.team";
  if (match.accountId === "*") return "binding.channel";
  return "binding.account";
}

function matches(
  config: EdgeclawConfig,
  binding: Binding,
  envelope: InboundEnvelope,
  facts: RoutingFacts,
  tier: BindingTier,
): boolean {
  const match = binding.match;
  const account = normalizeAccountId(envelope.accountId);
  if (match.accountId === undefined) {
    if (account !== defaultAccountId(config, envelope.channel)) return false;
  } else if (match.accountId !== "*" && normalizeAccountId(match.accountId) !== account) {
    return false;
  }
  if (match.peer) {
    if (match.peer.kind !== envelope.chatType) return false;
    if (match.peer.id !== "*") {
      // Tier 1 compares the conversation itself; tier 2 the parent of a thread.
      const target = tier === "binding.peer.parent" ? envelope.parentPeerId : envelope.peerId;
      if (target === undefined || normalizeToken(match.peer.id) !== normalizeToken(target))
        return false;
    }
  }
  const team = envelope.teamId === undefined ? undefined : normalizeToken(envelope.teamId);
  if (match.guildId && normalizeToken(match.guildId) !== team) return false;
  if (match.teamId && normalizeToken(match.teamId) !== team) return false;
  if (match.roles) {
    const roles = new Set((facts.senderRoles ?? []).map(normalizeToken));
    if (!match.roles.some((role) => roles.has(normalizeToken(role)))) return false;
  }
  return true;
}
