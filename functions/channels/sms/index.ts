import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  smsChannelSchema,
  type SmsChannelConfig,
  type SmsAccount,
  smsAccountIn,
} from "./config.ts";
import { fetchSmsMedia } from "./media.ts";
import { reconcileSms, sendSms } from "./send.ts";
import { MMS_MAX_BYTES, sendSmsFile, smsFileRefusal } from "./send-file.ts";
import { smsSetup } from "./setup.ts";
import { smsWebhook, type SmsRoute } from "./webhook.ts";
import { smsRequirements } from "./credentials.ts";

/** Replies through Twilio's Messages API; no idempotency key exists, so an unknown outcome is reconciled. */
export const smsAdapter: ChannelAdapter<SmsAccount> = {
  id: "sms",
  textChunkLimit: (account) => account?.textChunkLimit ?? 1500,
  send: sendSms,
  // A file goes as an MMS whose MediaUrl is a signed link Twilio fetches (send-file.ts).
  sendFile: sendSmsFile,
  fileRefusal: smsFileRefusal,
  maxFileBytes: (account) => Math.min(MMS_MAX_BYTES, (account?.mediaMaxMb ?? 5) * 1024 * 1024),
  reconcile: reconcileSms,
  fetchAttachment: fetchSmsMedia,
};

/** Twilio SMS/MMS: direct messages to a Twilio number (or Messaging Service), replies by the REST API. */
export const smsChannel: ChannelDefinition<SmsChannelConfig, SmsAccount, SmsRoute> = {
  id: "sms",
  account: smsAccountIn,
  requirements: smsRequirements,
  configSchema: smsChannelSchema,
  webhook: smsWebhook,
  outbound: smsAdapter,
  setup: smsSetup,
};

/** What the channel list (../manifests.ts) loads. */
export default smsChannel;
