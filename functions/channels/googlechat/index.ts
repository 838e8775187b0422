import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import { GOOGLECHAT_TEXT_LIMIT, googleChatAccountFor, googleChatChannelSchema } from "./config.ts";
import { fetchGoogleChatFile } from "./files.ts";
import { googleChatProgress } from "./progress.ts";
import { reconcileGoogleChatMessage, sendGoogleChatMessage } from "./send.ts";
import { GOOGLECHAT_SETUP } from "./setup.ts";
import { googleChatWebhook } from "./webhook.ts";
import { googleChatRequirements } from "./credentials.ts";

/** Replies through the Chat API as the app (service account); every send names its message id. */
export const googleChatAdapter: ChannelAdapter = {
  id: "googlechat",
  idempotentSends: true,
  textChunkLimit(config, accountId) {
    return googleChatAccountFor(config, accountId)?.textChunkLimit ?? GOOGLECHAT_TEXT_LIMIT;
  },
  chunkMode(config, accountId) {
    return googleChatAccountFor(config, accountId)?.chunkMode ?? "length";
  },
  send: sendGoogleChatMessage,
  reconcile: reconcileGoogleChatMessage,
  fetchAttachment: fetchGoogleChatFile,
  progress: googleChatProgress,
};

/** Google Chat apps over an HTTP endpoint: bearer-token verified events in, Chat API out. */
export const googleChatChannel: ChannelDefinition = {
  id: "googlechat",
  requirements: googleChatRequirements,
  configSchema: googleChatChannelSchema,
  webhook: googleChatWebhook,
  outbound: googleChatAdapter,
  setup: GOOGLECHAT_SETUP,
};
