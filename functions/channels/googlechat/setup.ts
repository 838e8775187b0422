import type { ChannelSetup } from "../channel.ts";

/** How a user connects Google Chat (docs/channels/googlechat.md). */
export const GOOGLECHAT_SETUP: ChannelSetup = {
  title: "Connect Google Chat",
  steps: `Try it first with no account: \`EDGECLAW_SIMULATE=1 npm run dev\`, then
\`npx edgeclaw simulate googlechat "hello"\` (or \`--group spaces/AAAA\` for a space).

1. In Google Cloud create a project, enable the **Google Chat API**, and create a **service account**
   (no roles needed) with a **JSON key**. Store the whole key file as a Worker secret:

   \`\`\`bash
   npx wrangler secret put GOOGLE_CHAT_SERVICE_ACCOUNT < service-account.json
   \`\`\`

2. **Google Chat API → Configuration**: app name and avatar, turn **interactive features** on, tick
   **Join spaces and group conversations**, connection **HTTP endpoint URL** =
   \`https://<your-worker>/googlechat\` (\`channels.googlechat.webhookPath\`), visibility: your address.
   Under **Authentication audience** pick the same thing as \`audienceType\` below.
3. Add to \`edgeclaw.json5\` and deploy:

   \`\`\`json5
   channels: { googlechat: { audienceType: "app-url", audience: "https://<your-worker>/googlechat", botUser: "users/<app user id>" } }
   \`\`\`

   (\`audienceType: "project-number"\` with \`audience: "<project number>"\` works too.) Without
   \`botUser\`, a mention of any bot counts as a mention of this app.
4. In Google Chat, find the app by name and message it. Unknown senders get a pairing code
   (\`dmPolicy: "pairing"\`); approve with \`npx edgeclaw pairing approve googlechat <CODE>\`. Spaces stay
   closed until listed: \`groups: { "spaces/AAAA": { requireMention: true } }\`.`,
};
