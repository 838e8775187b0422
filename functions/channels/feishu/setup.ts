import type { ChannelSetup } from "../channel.ts";

/** How a user connects Feishu / Lark in webhook mode (docs/channels/feishu.md, `npx edgeclaw channels feishu setup`). */
export const FEISHU_SETUP: ChannelSetup = {
  title: "Connect Feishu / Lark",
  steps: `Try it first with no account: \`EDGECLAW_SIMULATE=1 npm run dev\`, then
\`npx edgeclaw simulate feishu "hello"\` (or \`--group oc_…\` for a group chat).

1. On the Feishu Open Platform (https://open.feishu.cn/app) or Lark Developer
   (https://open.larksuite.com/app) create a **custom app** and add the **Bot** feature. Under
   **Permissions** grant \`im:message\`, \`im:message:send_as_bot\`, \`im:message.p2p_msg:readonly\`,
   \`im:message.group_at_msg:readonly\`, \`im:resource\` (files users send) and \`cardkit:card:write\` (streaming cards).
2. **Credentials & Basic Info**: App ID and App Secret. **Events & Callbacks → Encryption strategy**:
   set an Encrypt Key and copy the Verification Token. Store them as Worker secrets:

   \`\`\`bash
   npx wrangler secret put FEISHU_APP_ID
   npx wrangler secret put FEISHU_APP_SECRET
   npx wrangler secret put FEISHU_ENCRYPT_KEY
   npx wrangler secret put FEISHU_VERIFICATION_TOKEN
   \`\`\`

3. Add \`channels: { feishu: { connectionMode: "webhook", botOpenId: "ou_…" } }\` to \`edgeclaw.json5\`
   (\`domain: "lark"\` for larksuite.com; the bot's open_id lets group @mentions count — without it
   only DMs and groups with \`requireMention: false\` reach the agent) and deploy.
4. **Events & Callbacks → Event configuration**: choose "Send events to developer server", Request
   URL \`https://<your-worker>/feishu/events\` (\`channels.feishu.webhookPath\`); Feishu posts a
   challenge and the Worker answers it. Add the events \`im.message.receive_v1\`,
   \`im.chat.member.bot.added_v1\` and \`im.chat.member.bot.deleted_v1\`. Publish a version of the app.
5. Message the bot. Unknown senders get a pairing code (\`dmPolicy: "pairing"\`); approve with
   \`npx edgeclaw pairing approve feishu <CODE>\`. Groups stay closed until listed:
   \`groupAllowFrom: ["oc_…"]\` or \`groups: { "oc_…": { requireMention: true } }\`.`,
};
