import type { ChannelManifest } from "../manifest.ts";
import { msTeamsChannelSchema } from "./config.ts";

/** Microsoft Teams: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "msteams",
  label: "Microsoft Teams",
  configSchema: msTeamsChannelSchema,
  docsPage: "docs/channels/msteams.md",
};
