import type { ChannelManifest } from "../manifest.ts";
import { telegramChannelSchema } from "./config.ts";

/** Telegram: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "telegram",
  label: "Telegram",
  configSchema: telegramChannelSchema,
  docsPage: "docs/channels/telegram.md",
};
