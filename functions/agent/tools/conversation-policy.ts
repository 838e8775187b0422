import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import { guildAccess } from "../../config/guild-access.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import type { ToolPolicyLayer } from "./policy.ts";

/**
 * The tool policy of the conversation a run answers: `tools: { allow, deny }` on its entry in a
 * nested team/guild map (`channels.msteams.teams.<team>.channels.<channel>`, Discord's
 * `guilds.<guild>.channels.<channel>`; channel keys over team keys, config/guild-access.ts). It is
 * one more narrowing layer on top of the global and agent policies: it can take tools away, never
 * add one the agent does not have. `alsoAllow` and `toolsBySender` are not applied.
 */

const toolsSchema = z
  .object({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() })
  .loose();

export function conversationToolLayer(
  config: EdgeclawConfig,
  route: ReplyRoute,
): ToolPolicyLayer | undefined {
  const block = (config.channels as Record<string, unknown>)[route.channel];
  const teamId = route.extra?.teamId;
  if (!block || !teamId) return undefined;
  // A thread (Discord) falls back to its channel's entry, as access does.
  const place = guildAccess(block, route.accountId, {
    teamId,
    peerId: route.to,
    parentPeerId: route.extra?.parentPeerId,
  });
  if (!place.configured || !place.entry) return undefined;
  const tools = toolsSchema.safeParse((place.entry as Record<string, unknown>).tools);
  if (!tools.success || (!tools.data.allow && !tools.data.deny)) return undefined;
  return {
    source: `channels.${route.channel} team ${teamId} channel ${route.to} tools`,
    allow: tools.data.allow,
    deny: tools.data.deny,
  };
}
