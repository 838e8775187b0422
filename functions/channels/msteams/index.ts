import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import { MSTEAMS_TEXT_LIMIT, msTeamsAccountFor, msTeamsChannelSchema } from "./config.ts";
import { fetchTeamsAttachment } from "./files.ts";
import { msTeamsProgress } from "./progress.ts";
import { reconcileTeamsMessage, sendTeamsMessage } from "./send.ts";
import { MSTEAMS_SETUP } from "./setup.ts";
import { msTeamsWebhook } from "./webhook.ts";
import { msTeamsRequirements } from "./credentials.ts";

/** Replies through the Bot Connector API at the activity's (allowlisted) serviceUrl. */
export const msTeamsAdapter: ChannelAdapter = {
  id: "msteams",
  textChunkLimit(config, accountId) {
    return msTeamsAccountFor(config, accountId)?.textChunkLimit ?? MSTEAMS_TEXT_LIMIT;
  },
  chunkMode(config, accountId) {
    const account = msTeamsAccountFor(config, accountId);
    return account?.streaming.chunkMode ?? account?.chunkMode ?? "length";
  },
  send: sendTeamsMessage,
  reconcile: reconcileTeamsMessage,
  progress: msTeamsProgress,
  fetchAttachment: fetchTeamsAttachment,
};

/** Microsoft Teams bots over the Bot Framework: JWT-verified activities in, Bot Connector out. */
export const msTeamsChannel: ChannelDefinition = {
  id: "msteams",
  requirements: msTeamsRequirements,
  configSchema: msTeamsChannelSchema,
  webhook: msTeamsWebhook,
  outbound: msTeamsAdapter,
  setup: MSTEAMS_SETUP,
  groupSendersFallBackToAllowFrom: true,
};
