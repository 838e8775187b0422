import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  LINE_MESSAGES_PER_CALL,
  LINE_TEXT_LIMIT,
  lineAccount,
  lineChannelSchema,
  type LineChannelConfig,
  type LineAccount,
} from "./config.ts";
import { fetchLineContent } from "./content.ts";
import { lineProgress } from "./progress.ts";
import { reconcileLineMessage, sendLineMessage } from "./send.ts";
import { lineFileRefusal, sendLineFile } from "./send-file.ts";
import { LINE_SETUP } from "./setup.ts";
import { lineWebhook } from "./webhook.ts";
import { lineRequirements } from "./credentials.ts";

/**
 * Replies through the Messaging API. One outbox chunk is one API call of up to five text messages of
 * `textChunkLimit` characters each, so a reply that fits five messages goes out whole on the free
 * reply token. Pushes carry X-Line-Retry-Key (the outbox chunk id): a repeat is dropped by LINE.
 *
 * `idempotentSends` stays unset on purpose: only pushes are idempotent. A push that got no answer
 * comes back retryable (never an unknown outcome) and is repeated under its key; the one unknown
 * outcome left is a reply-token send, which has no key and nothing to look up — repeating it would
 * find the token used and push the same text again. `reconcileLineMessage` says so, and the outbox
 * tells the user once instead (test/channels/line/e2e.test.ts, "a reply whose answer was lost").
 */
export const lineAdapter: ChannelAdapter<LineAccount> = {
  id: "line",
  textChunkLimit: (account) =>
    (account?.textChunkLimit ?? LINE_TEXT_LIMIT) * LINE_MESSAGES_PER_CALL,
  chunkMode: (account) => account?.chunkMode ?? "length",
  send: sendLineMessage,
  // A file goes as a signed link LINE fetches (send-file.ts), within mediaMaxMb (10: LINE's image limit).
  sendFile: sendLineFile,
  fileRefusal: lineFileRefusal,
  maxFileBytes: (account) => (account?.mediaMaxMb ?? 10) * 1024 * 1024,
  reconcile: reconcileLineMessage,
  fetchAttachment: fetchLineContent,
  progress: lineProgress,
};

/** LINE Messaging API: signed webhooks in (several events per request), reply/push out. */
export const lineChannel: ChannelDefinition<LineChannelConfig, LineAccount> = {
  id: "line",
  account: lineAccount,
  requirements: lineRequirements,
  configSchema: lineChannelSchema,
  webhook: lineWebhook,
  outbound: lineAdapter,
  setup: LINE_SETUP,
};

/** What the channel list (../manifests.ts) loads. */
export default lineChannel;
