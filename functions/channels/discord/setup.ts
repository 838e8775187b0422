/** docs/channels/discord.md and `npx edgeclaw channels discord setup`. */
export const discordSetupSteps = `1. In the [Discord developer portal](https://discord.com/developers/applications): **New Application**, then **Bot**:
   enable the privileged **Message Content Intent** (and **Server Members Intent** for member joins), **Reset Token** and keep it.
2. **OAuth2 → URL Generator**: scopes \`bot\` and \`applications.commands\`; permissions View Channels, Send Messages,
   Send Messages in Threads, Read Message History (replies are reconciled through it), Add Reactions. Open the URL, add the bot to your server.
3. Store the token where both the Worker and the companion read it: \`npx wrangler secret put DISCORD_BOT_TOKEN\`
   (and the companion's \`-e DISCORD_BOT_TOKEN\`), then enable the channel:
   \`channels: { discord: { enabled: true, token: { source: "env", id: "DISCORD_BOT_TOKEN" } } }\`.
   DMs pair by default; add servers with \`guilds: { "<server id>": { requireMention: true, users: ["<your user id>"] } }\`.
4. Messages come over the Gateway, which needs the companion (a socket): it runs with \`npm run dev\` locally, as a
   Cloudflare Container or on any Docker host in production (see "The companion").
5. Slash commands (optional, no socket needed): copy the **Public Key** (General Information) into
   \`channels.discord.publicKey\`, deploy, and paste \`https://<your worker>/discord/interactions\` as the
   **Interactions Endpoint URL**. Discord checks it with a signed PING before it saves.`;
