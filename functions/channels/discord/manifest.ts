import type { ChannelManifest } from "../manifest.ts";
import { discordChannelSchema } from "./config.ts";

/** Discord: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "discord",
  label: "Discord",
  configSchema: discordChannelSchema,
  docsPage: "docs/channels/discord.md",
};
