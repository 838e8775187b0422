import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  telegramAccount,
  telegramChannelSchema,
  type TelegramChannelConfig,
  type TelegramAccount,
} from "./config.ts";
import { fetchTelegramFile } from "./files.ts";
import { telegramProgress } from "./progress.ts";
import { reconcileTelegramMessage, sendTelegramMessage } from "./send.ts";
import { telegramWebhook } from "./webhook.ts";
import { sendTelegramFile, TELEGRAM_UPLOAD_MAX_BYTES } from "./send-file.ts";
import { telegramSocket } from "./socket.ts";
import { telegramRequirements } from "./credentials.ts";

/** Replies through the Bot API (sendMessage, HTML); no idempotency key and no history to look in (send.ts). */
export const telegramAdapter: ChannelAdapter<TelegramAccount> = {
  id: "telegram",
  textChunkLimit: (account) => account?.textChunkLimit ?? 4000,
  chunkMode: (account) => account?.streaming.chunkMode ?? "length",
  send: sendTelegramMessage,
  sendFile: sendTelegramFile,
  voiceNotes: true,
  maxFileBytes: (account) =>
    Math.min(TELEGRAM_UPLOAD_MAX_BYTES, (account?.mediaMaxMb ?? 100) * 1024 * 1024),
  reconcile: reconcileTelegramMessage,
  fetchAttachment: fetchTelegramFile,
  progress: telegramProgress,
};

const setupSteps = `1. In Telegram, talk to **@BotFather** (check the name), send \`/newbot\`, and keep the token it gives you.
   For a bot that should see every group message (\`requireMention: false\`), also send \`/setprivacy\` → Disable,
   then remove and re-add the bot to its groups.
2. Store the token as a Worker secret: \`npx wrangler secret put TELEGRAM_BOT_TOKEN\`.
3. Enable the channel in \`edgeclaw.json5\`: \`channels: { telegram: { enabled: true, botUsername: "my_bot" } }\`
   (\`botUsername\` lets \`@my_bot\` count as a mention in groups; DMs pair by default).
4. Deploy, then register the webhook: \`npx edgeclaw channels telegram set-webhook --url https://<your worker>/telegram-webhook\`.
   It generates the secret token Telegram will send, registers it, and prints the
   \`npx wrangler secret put TELEGRAM_WEBHOOK_SECRET\` line to run with it.
5. Check it: \`npx edgeclaw channels telegram info\`. Try it first with no account at all:
   \`EDGECLAW_SIMULATE=1 npm run dev\`, then \`npx edgeclaw simulate telegram "hello"\`.`;

/**
 * Telegram in webhook mode (`setWebhook` with a secret token → the Worker) or, per account with
 * `mode: "polling"`, long-polled by the companion (socket.ts); replies via the Bot API either way.
 */
export const telegramChannel: ChannelDefinition<TelegramChannelConfig, TelegramAccount> = {
  id: "telegram",
  account: telegramAccount,
  requirements: telegramRequirements,
  configSchema: telegramChannelSchema,
  webhook: telegramWebhook,
  socket: telegramSocket,
  outbound: telegramAdapter,
  setup: { title: "Connect Telegram", steps: setupSteps },
  groupSendersFallBackToAllowFrom: true,
};

/** What the channel list (../manifests.ts) loads. */
export default telegramChannel;
