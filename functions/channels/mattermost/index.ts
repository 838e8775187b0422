import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  mattermostAccount,
  mattermostChannelSchema,
  type MattermostChannelConfig,
  type MattermostAccount,
} from "./config.ts";
import { mattermostProgress } from "./progress.ts";
import { reconcileMattermostMessage, sendMattermostMessage } from "./send.ts";
import { sendMattermostFile } from "./send-file.ts";
import { mattermostSocket } from "./socket.ts";
import { mattermostWebhook, type MattermostEndpoint } from "./webhook.ts";
import { mattermostParticipatedInThread } from "./threads.ts";
import { mattermostRequirements } from "./credentials.ts";
import { mattermostAdmin } from "./admin.ts";

/** Replies through REST v4 (Markdown as written); a lost send is reconciled by its props marker (send.ts). */
export const mattermostAdapter: ChannelAdapter<MattermostAccount> = {
  id: "mattermost",
  textChunkLimit: (account) => account?.textChunkLimit ?? 4000,
  chunkMode: (account) => account?.streaming.chunkMode ?? "length",
  send: sendMattermostMessage,
  sendFile: sendMattermostFile,
  // Mattermost's own default bound (FileSettings.MaxFileSize, 100 MB); the server refuses more with 413.
  maxFileBytes: () => 100 * 1024 * 1024,
  reconcile: reconcileMattermostMessage,
  // Every post carries its key in its props, and a preview patch or a retract is safe to repeat.
  reconcilesChunk: () => true,
  participatedInThread: mattermostParticipatedInThread,
  progress: mattermostProgress,
};

const setupSteps = `1. In Mattermost: **System Console → Integrations → Bot Accounts** (enable bot accounts), then
   **Integrations → Bot Accounts → Add Bot Account**; keep its **access token**. Add the bot to the teams
   and channels it should read.
2. Give the companion the token (it holds the WebSocket): \`MATTERMOST_BOT_TOKEN\` in its environment
   (\`npx wrangler secret put MATTERMOST_BOT_TOKEN\` as well: the Worker replies over REST with it).
3. Enable the channel in \`edgeclaw.json5\`:
   \`channels: { mattermost: { enabled: true, baseUrl: "https://chat.example.com", botToken: { source: "env", id: "MATTERMOST_BOT_TOKEN" } } }\`
   (DMs pair by default; in channels the bot answers @-mentions — \`chatmode\` onmessage/onchar to change that).
4. List \`"mattermost"\` in the companion's \`companion.ingressKeys[].channels\` and start the companion.`;

/** Mattermost: WebSocket events through the companion; native slash command callbacks and button clicks in the Worker; replies, typing and previews over REST v4 from the Worker. */
export const mattermostChannel: ChannelDefinition<
  MattermostChannelConfig,
  MattermostAccount,
  MattermostEndpoint
> = {
  id: "mattermost",
  account: mattermostAccount,
  requirements: mattermostRequirements,
  configSchema: mattermostChannelSchema,
  webhook: mattermostWebhook,
  socket: mattermostSocket,
  outbound: mattermostAdapter,
  setup: { title: "Connect Mattermost", steps: setupSteps },
  admin: (deps) => mattermostAdmin(deps, mattermostChannel),
};

/** What the channel list (../manifests.ts) loads. */
export default mattermostChannel;
