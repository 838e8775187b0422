import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  FEISHU_TEXT_LIMIT,
  feishuAccount,
  feishuChannelSchema,
  type FeishuChannelConfig,
  type FeishuAccount,
} from "./config.ts";
import { feishuProgress } from "./progress.ts";
import { fetchFeishuResource } from "./resources.ts";
import { sendFeishuMessage } from "./send.ts";
import { FEISHU_FILE_MAX_BYTES, sendFeishuFile } from "./send-file.ts";
import { FEISHU_SETUP } from "./setup.ts";
import { feishuWebhook } from "./webhook.ts";
import { feishuRequirements } from "./credentials.ts";

/**
 * Replies through the IM v1 message and reply APIs as rich-text posts of up to `textChunkLimit`
 * characters, streamed through a CardKit card while the model writes (`streaming.mode` "partial"). Every send carries `uuid` (from the outbox chunk id) and Feishu sends a uuid only once
 * within an hour: a send whose answer was lost is simply sent again (`idempotentSends`).
 */
export const feishuAdapter: ChannelAdapter<FeishuAccount> = {
  id: "feishu",
  textChunkLimit: (account) => account?.textChunkLimit ?? FEISHU_TEXT_LIMIT,
  chunkMode: (account) => account?.streaming?.chunkMode ?? "length",
  idempotentSends: true,
  send: sendFeishuMessage,
  sendFile: sendFeishuFile,
  voiceNotes: true,
  maxFileBytes: (account) =>
    Math.min(FEISHU_FILE_MAX_BYTES, (account?.mediaMaxMb ?? 30) * 1024 * 1024),
  fetchAttachment: fetchFeishuResource,
  progress: feishuProgress,
};

/** Feishu / Lark in webhook mode: verified (and decrypted) event callbacks in, IM v1 replies out. */
export const feishuChannel: ChannelDefinition<FeishuChannelConfig, FeishuAccount> = {
  id: "feishu",
  account: feishuAccount,
  requirements: feishuRequirements,
  configSchema: feishuChannelSchema,
  webhook: feishuWebhook,
  outbound: feishuAdapter,
  setup: FEISHU_SETUP,
};

/** What the channel list (../manifests.ts) loads. */
export default feishuChannel;
