import type { ChannelSetup } from "../channel.ts";

/** How a user connects the Cloud API; every step, with where each id is: docs/channels/whatsappcloud.md. */
export const WHATSAPP_CLOUD_SETUP: ChannelSetup = {
  title: "Connect WhatsApp Business (Cloud API)",
  steps: `See docs/channels/whatsappcloud.md: a Meta app (developers.facebook.com/apps), its Phone number ID in \`phoneNumberId\`, WHATSAPP_CLOUD_APP_SECRET / _ACCESS_TOKEN / _VERIFY_TOKEN as Worker secrets, and the webhook \`https://<your-worker>/whatsappcloud/webhook\` subscribed to \`messages\`. Try it first: \`npx edgeclaw simulate whatsappcloud "hello"\`.`,
};
