import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  whatsappAccount,
  whatsappChannelSchema,
  type WhatsAppAccount,
  type WhatsAppChannelConfig,
} from "./config.ts";
import { whatsappRequirements } from "./credentials.ts";
import { sendWhatsAppMessage, whatsappProgress } from "./send.ts";
import { whatsappSocket } from "./socket.ts";

/**
 * Replies through the companion's live session; every chunk is one command whose id (and the
 * WhatsApp message id derived from it) is stable across retries (send.ts), so a send whose answer
 * was lost is sent again without doubling.
 */
export const whatsappAdapter: ChannelAdapter<WhatsAppAccount> = {
  id: "whatsapp",
  textChunkLimit: (account) => account?.textChunkLimit ?? 4000,
  chunkMode: (account) => account?.streaming.chunkMode ?? "length",
  idempotentSends: true,
  send: sendWhatsAppMessage,
  progress: whatsappProgress,
};

const setupSteps = `1. List \`"whatsapp"\` in \`companion.ingressKeys[].channels\`, set \`companion.url\`, and enable
   \`channels.whatsapp\` (\`dmPolicy\`, \`allowFrom\` in E.164).
2. Start the companion and link the device: \`npx edgeclaw channels whatsapp link\` shows the QR code
   (or the pairing code, with \`pairingPhoneNumber\`); WhatsApp → Linked devices → Link a device.`;

/** WhatsApp Web (Baileys, a linked device) through the companion; replies through the companion too. */
export const whatsappChannel: ChannelDefinition<WhatsAppChannelConfig, WhatsAppAccount> = {
  id: "whatsapp",
  account: whatsappAccount,
  requirements: whatsappRequirements,
  configSchema: whatsappChannelSchema,
  socket: whatsappSocket,
  outbound: whatsappAdapter,
  setup: { title: "Connect WhatsApp", steps: setupSteps },
  groupSendersFallBackToAllowFrom: true,
};

/** What the channel list (../manifests.ts) loads. */
export default whatsappChannel;
