import type { EdgeclawConfig } from "../config/schema.ts";

/**
 * OpenClaw's `session.sendPolicy` and `/send on|off|inherit`: whether the agent's replies in a
 * session reach its chat. A session's /send override wins; else the first matching `deny` rule
 * denies, else a matching `allow` rule allows, else `default` ("allow"). A rule's `match` fields
 * must all hold: `channel`, `chatType` (direct | group | channel; `dm` is OpenClaw's old name for
 * direct), `keyPrefix` (the session key after `agent:<id>:`) and `rawKeyPrefix` (the whole key).
 * The run still happens and is kept in the transcript; only its delivery is held back.
 */
export interface SendTarget {
  sessionKey: string;
  channel: string;
  chatType?: string;
}

export type SendDecision =
  | { allowed: true }
  | { allowed: false; reason: "session" | "rule" | "default" };

export function sendDecision(
  config: EdgeclawConfig,
  target: SendTarget,
  override: "allow" | "deny" | undefined,
): SendDecision {
  if (override === "allow") return { allowed: true };
  if (override === "deny") return { allowed: false, reason: "session" };
  const policy = config.session.sendPolicy;
  const matching = policy.rules.filter((rule) => matches(rule.match, target));
  if (matching.some((rule) => rule.action === "deny")) return { allowed: false, reason: "rule" };
  if (matching.some((rule) => rule.action === "allow")) return { allowed: true };
  return policy.default === "allow" ? { allowed: true } : { allowed: false, reason: "default" };
}

type Match = EdgeclawConfig["session"]["sendPolicy"]["rules"][number]["match"];

function matches(match: Match, target: SendTarget): boolean {
  if (match.channel !== undefined && match.channel.toLowerCase() !== target.channel.toLowerCase())
    return false;
  if (match.chatType !== undefined) {
    const wanted = match.chatType === "dm" ? "direct" : match.chatType;
    if (wanted !== target.chatType) return false;
  }
  if (match.rawKeyPrefix !== undefined && !target.sessionKey.startsWith(match.rawKeyPrefix))
    return false;
  if (match.keyPrefix !== undefined) {
    const relative = target.sessionKey.replace(/^agent:[^:]+:/, "");
    if (!relative.startsWith(match.keyPrefix)) return false;
  }
  return true;
}
