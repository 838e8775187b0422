import type { ChannelSetup } from "../channel.ts";

/** How a user connects LINE (docs/channels/line.md, `npx edgeclaw channels line setup`). */
export const LINE_SETUP: ChannelSetup = {
  title: "Connect LINE",
  steps: `Try it first with no account: \`EDGECLAW_SIMULATE=1 npm run dev\`, then
\`npx edgeclaw simulate line "hello"\` (or \`--group <C…id>\` for a group).

1. In the LINE Developers console (https://developers.line.biz/console/) create a Provider and a
   **Messaging API** channel (LINE creates its LINE Official Account).
2. **Basic settings → Channel secret**, and **Messaging API → Channel access token (long-lived) → Issue**.
   Store both as Worker secrets:

   \`\`\`bash
   npx wrangler secret put LINE_CHANNEL_SECRET
   npx wrangler secret put LINE_CHANNEL_ACCESS_TOKEN
   \`\`\`

3. Add \`channels: { line: {} }\` to \`edgeclaw.json5\` (the default account reads those two secrets)
   and deploy.
4. **Messaging API → Webhook settings**: Webhook URL \`https://<your-worker>/line/webhook\`
   (\`channels.line.webhookPath\`), turn **Use webhook** on, press **Verify** (a signed request with no
   events; the Worker answers 200). Turn **Webhook redelivery** on: events the Worker could not store
   are sent again, and each is handled once. In the LINE Official Account Manager turn auto-reply
   and greeting messages off, so only the agent answers.
5. Add the account as a friend and message it. Unknown senders get a pairing code
   (\`dmPolicy: "pairing"\`); approve with \`npx edgeclaw pairing approve line <CODE>\`. Groups stay closed
   until listed: \`groups: { "C…": { requireMention: true } }\` or \`groupAllowFrom: ["U…"]\`.`,
};
