import type { ChannelManifest } from "../manifest.ts";
import { smsChannelSchema } from "./config.ts";

/** Twilio SMS: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "sms",
  label: "Twilio SMS",
  configSchema: smsChannelSchema,
  docsPage: "docs/channels/sms.md",
};
