import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  MSTEAMS_TEXT_LIMIT,
  msTeamsChannelSchema,
  type MsTeamsChannelConfig,
  type MsTeamsAccount,
  msTeamsAccount,
} from "./config.ts";
import { fetchTeamsAttachment } from "./files.ts";
import { msTeamsProgress } from "./progress.ts";
import { reconcileTeamsMessage, sendTeamsMessage } from "./send.ts";
import { fileLinkMessage, fileLinkRefusal } from "../file-link.ts";
import { MSTEAMS_SETUP } from "./setup.ts";
import { msTeamsWebhook } from "./webhook.ts";
import { msTeamsRequirements } from "./credentials.ts";

/** Replies through the Bot Connector API at the activity's (allowlisted) serviceUrl. */
export const msTeamsAdapter: ChannelAdapter<MsTeamsAccount> = {
  id: "msteams",
  textChunkLimit: (account) => account?.textChunkLimit ?? MSTEAMS_TEXT_LIMIT,
  chunkMode: (account) => account?.streaming.chunkMode ?? account?.chunkMode ?? "length",
  send: sendTeamsMessage,
  // A file goes as a message linking to it (../file-link.ts says why no upload), via the text send.
  sendFile: async (message, _bytes, ctx) =>
    sendTeamsMessage(await fileLinkMessage(message, ctx), ctx),
  fileRefusal: fileLinkRefusal,
  reconcile: reconcileTeamsMessage,
  progress: msTeamsProgress,
  fetchAttachment: fetchTeamsAttachment,
};

/** Microsoft Teams bots over the Bot Framework: JWT-verified activities in, Bot Connector out. */
export const msTeamsChannel: ChannelDefinition<MsTeamsChannelConfig, MsTeamsAccount> = {
  id: "msteams",
  account: msTeamsAccount,
  requirements: msTeamsRequirements,
  configSchema: msTeamsChannelSchema,
  webhook: msTeamsWebhook,
  outbound: msTeamsAdapter,
  setup: MSTEAMS_SETUP,
  groupSendersFallBackToAllowFrom: true,
};

/** What the channel list (../manifests.ts) loads. */
export default msTeamsChannel;
