import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  signalAccount,
  signalChannelSchema,
  type SignalAccount,
  type SignalChannelConfig,
} from "./config.ts";
import { signalRequirements } from "./credentials.ts";
import { sendSignalMessage, signalProgress } from "./send.ts";
import { signalSocket } from "./socket.ts";

/**
 * Replies through the companion's Signal connector (send.ts): every command carries an id the
 * companion keeps its answer under, so a send whose answer was lost is asked again, not repeated.
 */
export const signalAdapter: ChannelAdapter<SignalAccount> = {
  id: "signal",
  textChunkLimit: (account) => account?.textChunkLimit ?? 4000,
  chunkMode: (account) => account?.streaming.chunkMode ?? "length",
  idempotentSends: true,
  send: sendSignalMessage,
  progress: signalProgress,
};

const setupSteps = `1. Use a separate number for the bot. Install signal-cli beside the companion (the companion image has it)
   and register or link the account there: \`signal-cli -a +15551234567 register\` then \`verify <code>\`
   (a captcha may be asked: https://signalcaptchas.org/registration/generate.html), or
   \`signal-cli link -n "edgeclaw"\` and scan the QR code with the phone's Signal.
2. Enable the channel in \`edgeclaw.json5\`:
   \`channels: { signal: { enabled: true, account: "+15551234567" } }\` — the companion starts
   \`signal-cli daemon --http 127.0.0.1:8080 --receive-mode manual\` itself (transport.kind "managed-native"),
   or point \`transport: { kind: "external-native", url: "http://127.0.0.1:8080" }\` at a daemon you run.
3. Set \`companion.url\` and \`companion.outboundKeys\` (replies go out through the companion), list \`"signal"\` in
   the companion's \`companion.ingressKeys[].channels\` and start the companion.
4. DM the bot and approve the pairing code: \`npx edgeclaw pairing approve signal <code>\`.`;

/** Signal: signal-cli's JSON-RPC daemon through the companion, both ways. */
export const signalChannel: ChannelDefinition<SignalChannelConfig, SignalAccount> = {
  id: "signal",
  account: signalAccount,
  requirements: signalRequirements,
  configSchema: signalChannelSchema,
  socket: signalSocket,
  outbound: signalAdapter,
  setup: { title: "Connect Signal", steps: setupSteps },
  groupSendersFallBackToAllowFrom: true,
};

/** What the channel list (../manifests.ts) loads. */
export default signalChannel;
