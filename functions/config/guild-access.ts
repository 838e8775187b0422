import * as z from "zod";
import { groupEntrySchema, type GroupEntry } from "./channel-access.ts";

/**
 * Discord-style nested group allowlists: `channels.<ch>.guilds.<guildId>` (guild-wide keys) with an
 * optional `channels.<channelId>` map inside (channels/discord "Guild channel maps are allowlists").
 * Microsoft Teams spells the same shape `channels.msteams.teams.<teamId>.channels.<channelId>`
 * (channels/msteams "Team + channel allowlists"): read the same way, except that an event in no team
 * (a group chat) falls back to the flat `groups` allowlist instead of being refused.
 *
 * - A guild not in the map (and no `"*"` guild) is not allowlisted.
 * - A guild entry without a `channels` map admits every channel of the guild, under its own keys.
 * - Once a `channels` map has any entry it is an allowlist: an unlisted channel is refused (use the
 *   `"*"` key to keep the rest of the guild). A thread falls back to its parent channel's entry.
 * - A channel entry overrides the guild's keys (its `users: ["*"]` opens the room even when the
 *   guild's `users` is narrow); unset keys inherit the guild's.
 * - Guild-level events (a member joining) use the guild entry itself.
 * An account's `guilds` replaces the root's; an account without one inherits it.
 */

const guildEntrySchema = groupEntrySchema.extend({
  channels: z.record(z.string(), groupEntrySchema).optional(),
});
const guildMapSchema = z.record(z.string(), guildEntrySchema);
const guildsBlockSchema = z
  .object({
    guilds: guildMapSchema.optional(),
    teams: guildMapSchema.optional(),
    accounts: z
      .record(
        z.string(),
        z.object({ guilds: guildMapSchema.optional(), teams: guildMapSchema.optional() }).loose(),
      )
      .optional(),
  })
  .loose();

export interface GuildLookup {
  teamId?: string;
  peerId: string;
  parentPeerId?: string;
}

export type GuildAccess =
  /** The channel has no guild map for this account: the flat `groups` allowlist applies. */
  | { configured: false }
  /**
   * `entry` undefined = not allowlisted; `reason` says why. `refused`: refused under every groupPolicy
   * (an unlisted channel of a listed guild, an unreadable map); otherwise only an unlisted guild,
   * which groupPolicy "open" still admits.
   */
  | { configured: true; entry?: GroupEntry; reason?: string; refused?: boolean };

export function guildAccess(
  channelBlock: unknown,
  accountId: string,
  event: GuildLookup,
): GuildAccess {
  const parsed = guildsBlockSchema.safeParse(channelBlock ?? {});
  // A block the channel's own schema accepted but this view cannot read is refused, never opened.
  if (!parsed.success)
    return { configured: true, reason: "guild allowlist unreadable", refused: true };
  const own = parsed.data.accounts?.[accountId];
  const teamsStyle =
    !(own?.guilds ?? parsed.data.guilds) && Boolean(own?.teams ?? parsed.data.teams);
  const guilds = own?.guilds ?? parsed.data.guilds ?? own?.teams ?? parsed.data.teams;
  if (!guilds || Object.keys(guilds).length === 0) return { configured: false };
  if (!event.teamId)
    return teamsStyle
      ? { configured: false }
      : { configured: true, reason: "event names no guild" };
  const guild = guilds[event.teamId] ?? guilds["*"];
  if (!guild)
    return { configured: true, reason: `guild ${event.teamId} is not in the guild allowlist` };
  const { channels, ...guildKeys } = guild;
  if (event.peerId === event.teamId || !channels || Object.keys(channels).length === 0)
    return { configured: true, entry: guildKeys };
  const channelEntry =
    channels[event.peerId] ??
    (event.parentPeerId ? channels[event.parentPeerId] : undefined) ??
    channels["*"];
  if (!channelEntry)
    return {
      configured: true,
      reason: `channel ${event.peerId} is not in guild ${event.teamId}'s channels allowlist`,
      refused: true,
    };
  const merged: Record<string, unknown> = { ...guildKeys };
  for (const [key, value] of Object.entries(channelEntry))
    if (value !== undefined) merged[key] = value;
  return { configured: true, entry: merged as GroupEntry };
}
