import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import { smsAccount, smsChannelSchema, smsConfig } from "./config.ts";
import { fetchSmsMedia } from "./media.ts";
import { reconcileSms, sendSms } from "./send.ts";
import { smsSetup } from "./setup.ts";
import { smsWebhook } from "./webhook.ts";
import { smsRequirements } from "./credentials.ts";

/** Replies through Twilio's Messages API; no idempotency key exists, so an unknown outcome is reconciled. */
export const smsAdapter: ChannelAdapter = {
  id: "sms",
  textChunkLimit(config, accountId) {
    const sms = smsConfig(config);
    return sms ? smsAccount(sms, accountId).textChunkLimit : 1500;
  },
  send: sendSms,
  reconcile: reconcileSms,
  fetchAttachment: fetchSmsMedia,
};

/** Twilio SMS/MMS: direct messages to a Twilio number (or Messaging Service), replies by the REST API. */
export const smsChannel: ChannelDefinition = {
  id: "sms",
  requirements: smsRequirements,
  configSchema: smsChannelSchema,
  webhook: smsWebhook,
  outbound: smsAdapter,
  setup: smsSetup,
};
