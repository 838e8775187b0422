import type { ChannelSetup } from "../channel.ts";

/** How a user connects Twilio SMS (also docs/channels/sms.md). */
export const smsSetup: ChannelSetup = {
  title: "Connect Twilio SMS",
  steps: `1. In the Twilio Console open **Phone Numbers → Manage → Active numbers** and pick an SMS-capable
   number (MMS-capable to receive pictures and files). Note the **Account SID** (\`AC…\`) and the
   **Auth Token** (Account → API keys & tokens), and the number in E.164 (\`+15551234567\`) — or a
   Messaging Service SID (\`MG…\`) if Twilio should pick the sender.
2. Store the credentials as Worker secrets:

   \`\`\`bash
   npx wrangler secret put TWILIO_ACCOUNT_SID
   npx wrangler secret put TWILIO_AUTH_TOKEN
   \`\`\`

3. Add the channel to \`edgeclaw.json5\` and deploy:

   \`\`\`json5
   channels: {
     sms: {
       accountSid: { source: "env", id: "TWILIO_ACCOUNT_SID" },
       authToken: { source: "env", id: "TWILIO_AUTH_TOKEN" },
       fromNumber: "+15551234567",            // or messagingServiceSid: "MG…"
       // publicWebhookUrl: "https://sms.example.com/webhooks/sms",  // only behind a proxy, see below
       // dmPolicy "pairing" (default): unknown numbers get a code; approve with
       //   npx edgeclaw pairing approve sms <CODE>
       // allowFrom: ["+15557654321"],
     },
   },
   \`\`\`

4. On the number's page, under **Messaging Configuration → A message comes in**, choose **Webhook**,
   paste \`https://<your-worker>/webhooks/sms\` and **HTTP POST**, then **Save**.

Set \`publicWebhookUrl\` when the URL pasted in Twilio is not the Worker's own URL (a proxy, a custom
domain routed elsewhere, a tunnel): Twilio signs exactly the URL it was given, so the Worker must check
against that one. It must match the console byte for byte (scheme, host, port, path, query). With it
set, every reply also asks Twilio for delivery status callbacks at \`<publicWebhookUrl path>/status\`.

Try it first with no Twilio account: \`EDGECLAW_SIMULATE=1 npm run dev\`, then
\`npx edgeclaw simulate sms --from +15557654321 "hello"\`.`,
};
