import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  discordAccount,
  discordChannelSchema,
  type DiscordChannelConfig,
  type DiscordAccount,
} from "./config.ts";
import { discordInteractions } from "./interactions.ts";
import { discordRefusalRoute } from "./interaction-webhook.ts";
import { fetchDiscordAttachment } from "./files.ts";
import { discordProgress } from "./progress.ts";
import { reconcileDiscordMessage, sendDiscordMessage } from "./send.ts";
import { sendDiscordFile } from "./send-file.ts";
import { discordSocket } from "./socket.ts";
import { discordSetupSteps } from "./setup.ts";
import { discordRequirements } from "./credentials.ts";

/** Replies through Discord REST; a lost send is reconciled through the channel's history (send.ts). */
export const discordAdapter: ChannelAdapter<DiscordAccount> = {
  id: "discord",
  textChunkLimit: (account) => account?.textChunkLimit ?? 2000,
  chunkMode: (account) => account?.streaming.chunkMode ?? "length",
  maxLinesPerChunk: (account) => account?.maxLinesPerMessage ?? 17,
  send: sendDiscordMessage,
  sendFile: sendDiscordFile,
  // OpenClaw's channels.discord.mediaMaxMb "limits outbound Discord uploads" (default 100).
  maxFileBytes: (account) => (account?.mediaMaxMb ?? 100) * 1024 * 1024,
  reconcile: reconcileDiscordMessage,
  refusalRoute: discordRefusalRoute,
  fetchAttachment: fetchDiscordAttachment,
  progress: discordProgress,
};

/** Discord: Gateway messages through the companion, HTTP interactions (slash commands) in the Worker, REST replies. */
export const discordChannel: ChannelDefinition<DiscordChannelConfig, DiscordAccount> = {
  id: "discord",
  account: discordAccount,
  requirements: discordRequirements,
  configSchema: discordChannelSchema,
  webhook: discordInteractions,
  socket: discordSocket,
  outbound: discordAdapter,
  setup: { title: "Connect Discord", steps: discordSetupSteps },
  // guilds.<server id> (with channels.<channel id> inside) is Discord's group allowlist.
  groupAllowlistKey: "guilds",
};

/** What the channel list (../manifests.ts) loads. */
export default discordChannel;
