import type { ChannelManifest } from "../manifest.ts";
import { googleChatChannelSchema } from "./config.ts";

/** Google Chat: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "googlechat",
  label: "Google Chat",
  configSchema: googleChatChannelSchema,
  docsPage: "docs/channels/googlechat.md",
};
