import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  GOOGLECHAT_TEXT_LIMIT,
  googleChatChannelSchema,
  type GoogleChatChannelConfig,
  type GoogleChatAccount,
  googleChatAccount,
} from "./config.ts";
import { fetchGoogleChatFile } from "./files.ts";
import { googleChatProgress } from "./progress.ts";
import { reconcileGoogleChatMessage, sendGoogleChatMessage } from "./send.ts";
import { fileLinkMessage, fileLinkRefusal } from "../file-link.ts";
import { GOOGLECHAT_SETUP } from "./setup.ts";
import { googleChatWebhook } from "./webhook.ts";
import { googleChatRequirements } from "./credentials.ts";

/** Replies through the Chat API as the app (service account); every send names its message id. */
export const googleChatAdapter: ChannelAdapter<GoogleChatAccount> = {
  id: "googlechat",
  idempotentSends: true,
  textChunkLimit: (account) => account?.textChunkLimit ?? GOOGLECHAT_TEXT_LIMIT,
  chunkMode: (account) => account?.chunkMode ?? "length",
  send: sendGoogleChatMessage,
  // A file goes as a message linking to it (../file-link.ts says why no upload), via the text send.
  sendFile: async (message, _bytes, ctx) =>
    sendGoogleChatMessage(await fileLinkMessage(message, ctx), ctx),
  fileRefusal: fileLinkRefusal,
  reconcile: reconcileGoogleChatMessage,
  fetchAttachment: fetchGoogleChatFile,
  progress: googleChatProgress,
};

/** Google Chat apps over an HTTP endpoint: bearer-token verified events in, Chat API out. */
export const googleChatChannel: ChannelDefinition<GoogleChatChannelConfig, GoogleChatAccount> = {
  id: "googlechat",
  account: googleChatAccount,
  requirements: googleChatRequirements,
  configSchema: googleChatChannelSchema,
  webhook: googleChatWebhook,
  outbound: googleChatAdapter,
  setup: GOOGLECHAT_SETUP,
};

/** What the channel list (../manifests.ts) loads. */
export default googleChatChannel;
