import type { ChannelManifest } from "../manifest.ts";
import { mattermostChannelSchema } from "./config.ts";

/** Mattermost: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "mattermost",
  label: "Mattermost",
  configSchema: mattermostChannelSchema,
  docsPage: "docs/channels/mattermost.md",
};
