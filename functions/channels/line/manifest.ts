import type { ChannelManifest } from "../manifest.ts";
import { lineChannelSchema } from "./config.ts";

/** LINE: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "line",
  label: "LINE",
  configSchema: lineChannelSchema,
  docsPage: "docs/channels/line.md",
};
