import type { ChannelSetup } from "../channel.ts";

/** How a user connects Microsoft Teams (docs/channels/msteams.md). */
export const MSTEAMS_SETUP: ChannelSetup = {
  title: "Connect Microsoft Teams",
  steps: `1. In the Azure portal create an **Azure Bot** (type Single Tenant), then under **Configuration** copy the
   **Microsoft App ID**; **Manage Password → Certificates & secrets → New client secret** gives the
   password; the app registration's **Overview** shows the **Directory (tenant) ID**. Store them:

   \`\`\`bash
   npx wrangler secret put MSTEAMS_APP_ID
   npx wrangler secret put MSTEAMS_APP_PASSWORD
   npx wrangler secret put MSTEAMS_TENANT_ID
   \`\`\`

2. Azure Bot → **Configuration → Messaging endpoint** = \`https://<your-worker>/api/messages\`
   (\`channels.msteams.webhook.path\`); **Channels → Microsoft Teams → Apply**.
3. Add \`channels: { msteams: { enabled: true } }\` to \`edgeclaw.json5\` and deploy.
4. Build the app package (manifest.json + icons, zipped) and upload it in Teams (**Apps → Manage your
   apps → Upload an app**). Message the bot: unknown senders get a pairing code (\`dmPolicy: "pairing"\`);
   approve with \`npx edgeclaw pairing approve msteams <CODE>\`. Group chats and channels stay closed until
   listed by conversation id: \`groups: { "19:…@thread.tacv2": { requireMention: true } }\`.`,
};
