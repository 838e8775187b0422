/**
 * The gateway's own events (cron jobs, heartbeats, hooks) carry this channel when their answer
 * goes nowhere outside (no announce target): like the operator channels, it has no outbound API,
 * and no ingress key may ever speak for it.
 */
export const AUTOMATION_CHANNEL = "automation";

/**
 * Channels whose callers proved the gateway token (web chat, the OpenAI-compatible API): their
 * sender is the operator, so triage grants them full access without the DM/group policy. Being the
 * one list both that grant and the companion ingress's refusal read, a channel added here is
 * automatically one that no ingress key can ever speak for.
 */
export const OPERATOR_CHANNELS: ReadonlySet<string> = new Set([
  "openai",
  "webchat",
  AUTOMATION_CHANNEL,
]);

export function isOperatorChannel(channel: string): boolean {
  return OPERATOR_CHANNELS.has(channel.trim().toLowerCase());
}
