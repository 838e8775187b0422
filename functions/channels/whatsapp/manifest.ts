import type { ChannelManifest } from "../manifest.ts";
import { whatsappChannelSchema } from "./config.ts";

/** WhatsApp: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "whatsapp",
  label: "WhatsApp",
  configSchema: whatsappChannelSchema,
  docsPage: "docs/channels/whatsapp.md",
};
