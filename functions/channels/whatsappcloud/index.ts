import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  WHATSAPP_CLOUD_TEXT_LIMIT,
  whatsappCloudAccount,
  whatsappCloudChannelSchema,
  type WhatsAppCloudAccount,
  type WhatsAppCloudChannelConfig,
} from "./config.ts";
import { whatsappCloudRequirements } from "./credentials.ts";
import { fetchWhatsAppCloudMedia } from "./media.ts";
import { whatsappCloudProgress } from "./progress.ts";
import { reconcileWhatsAppCloud, sendWhatsAppCloud } from "./send.ts";
import { WHATSAPP_CLOUD_SETUP } from "./setup.ts";
import { whatsappCloudWebhook } from "./webhook.ts";

/**
 * Replies through the Cloud API's messages endpoint, one text message per outbox chunk. No
 * `idempotentSends`: Meta takes no idempotency key, so a send whose answer was lost is reconciled
 * (send.ts: untraceable, never repeated blindly). No `sendFile` yet: a file the agent makes is
 * named in one line of the reply instead (reply-files.ts).
 */
export const whatsappCloudAdapter: ChannelAdapter<WhatsAppCloudAccount> = {
  id: "whatsappcloud",
  textChunkLimit: (account) => Math.min(account?.textChunkLimit ?? 4000, WHATSAPP_CLOUD_TEXT_LIMIT),
  send: sendWhatsAppCloud,
  reconcile: reconcileWhatsAppCloud,
  fetchAttachment: fetchWhatsAppCloudMedia,
  progress: whatsappCloudProgress,
};

/** WhatsApp Business Cloud API: Meta-signed webhooks in, Graph API messages out; no companion. */
export const whatsappCloudChannel: ChannelDefinition<
  WhatsAppCloudChannelConfig,
  WhatsAppCloudAccount
> = {
  id: "whatsappcloud",
  account: whatsappCloudAccount,
  requirements: whatsappCloudRequirements,
  configSchema: whatsappCloudChannelSchema,
  webhook: whatsappCloudWebhook,
  outbound: whatsappCloudAdapter,
  setup: WHATSAPP_CLOUD_SETUP,
  // OpenClaw (channels/whatsapp): with no groupAllowFrom, allowFrom also admits group senders.
  groupSendersFallBackToAllowFrom: true,
};

/** What the channel list (../manifests.ts) loads. */
export default whatsappCloudChannel;
