import type { EdgeclawConfig } from "../config/schema.ts";
import type { AccessStore } from "./access-store.ts";
import { matchAllowList } from "./allowlist.ts";

/**
 * Owner and command authorization (tools/slash-commands "Authorization").
 *
 * Owner = the sender matches `commands.ownerAllowFrom` or the owner the first pairing approval
 * stored; a wildcard never makes anyone owner. Owner-only powers (the `cron` and `gateway` tools,
 * config-changing commands) are refused to everyone else whatever other config says.
 */
export const OWNER_ONLY_TOOLS: readonly string[] = ["cron", "gateway"];

export interface Sender {
  channel: string;
  senderId: string;
}

export async function isOwner(
  config: EdgeclawConfig,
  sender: Sender,
  store: Pick<AccessStore, "ownerEntries">,
): Promise<boolean> {
  const options = { channelLessEntries: !isCompanionChannel(config, sender.channel) };
  const configured = config.commands.ownerAllowFrom.filter((entry) => entry.trim() !== "*");
  if (matchAllowList(configured, sender, config.accessGroups, options).allowed) return true;
  if (configured.length > 0) return false;
  const learned = (await store.ownerEntries()).filter((entry) => entry.trim() !== "*");
  return matchAllowList(learned, sender, {}, options).allowed;
}

/**
 * A bare owner entry (`"123"`, `user:123`) names an id on any channel, as in OpenClaw — fine where the
 * platform itself vouches for the sender id (Slack, Telegram webhooks are verified per platform). On a
 * channel a companion ingress key speaks for, the key holder writes the sender id itself, so a leaked
 * Discord key could claim the owner's Telegram id; there only `<channel>:<id>` entries name the owner.
 */
function isCompanionChannel(config: EdgeclawConfig, channel: string): boolean {
  const ch = channel.trim().toLowerCase();
  return config.companion.ingressKeys.some((key) => key.channels.includes(ch));
}

/** The owner entry the first approval writes: `<channel>:<senderId>` (as `commands.ownerAllowFrom` takes it). */
export function ownerEntryFor(sender: Sender): string {
  return `${sender.channel}:${sender.senderId}`;
}

/**
 * `commands.allowFrom`, when set, is the only source of command authorization: the entry list for the
 * sender's channel, else the `"*"` list. Returns undefined when it is not set (the caller then falls
 * back to the channel's allowlists and pairing state).
 */
export function commandAllowFromDecision(
  config: EdgeclawConfig,
  sender: Sender,
): boolean | undefined {
  const table = config.commands.allowFrom;
  if (!table) return undefined;
  const entries = table[sender.channel] ?? table["*"];
  return matchAllowList(entries ?? [], sender, config.accessGroups).allowed;
}

/** Removes owner-only tools for non-owners (applied after every other tool policy). */
export function withoutOwnerOnlyTools<T extends { name: string }>(
  tools: readonly T[],
  senderIsOwner: boolean,
): T[] {
  return senderIsOwner ? [...tools] : tools.filter((tool) => !OWNER_ONLY_TOOLS.includes(tool.name));
}
