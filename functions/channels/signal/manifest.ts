import type { ChannelManifest } from "../manifest.ts";
import { signalChannelSchema } from "./config.ts";

/** Signal: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "signal",
  label: "Signal",
  configSchema: signalChannelSchema,
  docsPage: "docs/channels/signal.md",
};
