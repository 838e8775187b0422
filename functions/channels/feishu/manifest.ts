import type { ChannelManifest } from "../manifest.ts";
import { feishuChannelSchema } from "./config.ts";

/** Feishu / Lark: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "feishu",
  label: "Feishu / Lark",
  configSchema: feishuChannelSchema,
  docsPage: "docs/channels/feishu.md",
};
