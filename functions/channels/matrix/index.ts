import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  matrixAccount,
  matrixChannelSchema,
  type MatrixAccount,
  type MatrixChannelConfig,
} from "./config.ts";
import { matrixRequirements } from "./credentials.ts";
import { matrixProgress, sendMatrixMessage } from "./send.ts";
import { matrixSocket } from "./socket.ts";

/**
 * Replies through the client-server API; every send is a transaction the homeserver deduplicates
 * (send.ts), so a send whose answer was lost is simply sent again.
 */
export const matrixAdapter: ChannelAdapter<MatrixAccount> = {
  id: "matrix",
  textChunkLimit: (account) => account?.textChunkLimit ?? 4000,
  chunkMode: (account) => account?.streaming.chunkMode ?? "length",
  idempotentSends: true,
  send: sendMatrixMessage,
  progress: matrixProgress,
};

const setupSteps = `1. Create the bot's Matrix account on your homeserver, then get its access token: log in once
   (\`POST /_matrix/client/v3/login\` with \`m.login.password\`, or Element → Settings → Help & About →
   Access Token) and keep \`access_token\` and \`user_id\`.
2. Give the companion the token (it holds the /sync long poll): \`MATRIX_ACCESS_TOKEN\` in its environment
   (\`npx wrangler secret put MATRIX_ACCESS_TOKEN\` as well: the Worker replies with it).
3. Enable the channel in \`edgeclaw.json5\`:
   \`channels: { matrix: { enabled: true, homeserver: "https://matrix.example.org", accessToken: { source: "env", id: "MATRIX_ACCESS_TOKEN" } } }\`
   (DMs pair by default; rooms must be listed in \`groups\`; invites are joined only with \`autoJoin\`).
4. List \`"matrix"\` in the companion's \`companion.ingressKeys[].channels\` and start the companion.
   Only unencrypted rooms are served.`;

/** Matrix: /sync through the companion; replies and typing over the client-server API from the Worker. */
export const matrixChannel: ChannelDefinition<MatrixChannelConfig, MatrixAccount> = {
  id: "matrix",
  account: matrixAccount,
  requirements: matrixRequirements,
  configSchema: matrixChannelSchema,
  socket: matrixSocket,
  outbound: matrixAdapter,
  setup: { title: "Connect Matrix", steps: setupSteps },
};

/** What the channel list (../manifests.ts) loads. */
export default matrixChannel;
