import type { ChannelManifest } from "../manifest.ts";
import { slackChannelSchema } from "./config.ts";

/** Slack: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "slack",
  label: "Slack",
  configSchema: slackChannelSchema,
  docsPage: "docs/channels/slack.md",
};
