import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import { discordAccount, discordChannelSchema, discordConfig } from "./config.ts";
import { discordInteractions } from "./interactions.ts";
import { discordRefusalRoute } from "./interaction-webhook.ts";
import { fetchDiscordAttachment } from "./files.ts";
import { discordProgress } from "./progress.ts";
import { reconcileDiscordMessage, sendDiscordMessage } from "./send.ts";
import { discordSocket } from "./socket.ts";
import { discordSetupSteps } from "./setup.ts";
import { discordRequirements } from "./credentials.ts";

/** Replies through Discord REST; a lost send is reconciled through the channel's history (send.ts). */
export const discordAdapter: ChannelAdapter = {
  id: "discord",
  textChunkLimit(config, accountId) {
    const discord = discordConfig(config);
    return discord ? discordAccount(discord, accountId).textChunkLimit : 2000;
  },
  chunkMode(config, accountId) {
    const discord = discordConfig(config);
    return discord ? discordAccount(discord, accountId).streaming.chunkMode : "length";
  },
  maxLinesPerChunk(config, accountId) {
    const discord = discordConfig(config);
    return discord ? discordAccount(discord, accountId).maxLinesPerMessage : 17;
  },
  send: sendDiscordMessage,
  reconcile: reconcileDiscordMessage,
  refusalRoute: discordRefusalRoute,
  fetchAttachment: fetchDiscordAttachment,
  progress: discordProgress,
};

/** Discord: Gateway messages through the companion, HTTP interactions (slash commands) in the Worker, REST replies. */
export const discordChannel: ChannelDefinition = {
  id: "discord",
  requirements: discordRequirements,
  configSchema: discordChannelSchema,
  webhook: discordInteractions,
  socket: discordSocket,
  outbound: discordAdapter,
  setup: { title: "Connect Discord", steps: discordSetupSteps },
  // guilds.<server id> (with channels.<channel id> inside) is Discord's group allowlist.
  groupAllowlistKey: "guilds",
};
