import type { ChannelManifest } from "../manifest.ts";
import { whatsappCloudChannelSchema } from "./config.ts";

/** WhatsApp Business Cloud API: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "whatsappcloud",
  label: "WhatsApp Business (Cloud API)",
  configSchema: whatsappCloudChannelSchema,
  docsPage: "docs/channels/whatsappcloud.md",
};
