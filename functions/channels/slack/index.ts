import type { ChannelAdapter } from "../adapter.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  slackAccount,
  slackChannelSchema,
  type SlackAccount,
  type SlackChannelConfig,
} from "./config.ts";
import { slackWebhook } from "./ingress.ts";
import { slackSocket } from "./socket.ts";
import { slackProgress } from "./progress.ts";
import { reconcileSlackMessage, sendSlackMessage } from "./send.ts";
import { SLACK_UPLOAD_MAX_BYTES, sendSlackFile } from "./send-file.ts";
import { fetchSlackFile } from "./files.ts";
import { slackParticipatedInThread } from "./threads.ts";
import { slackRequirements } from "./credentials.ts";

/** Replies through the Web API; Slack has no idempotency key, so an unknown outcome is reconciled. */
export const slackAdapter: ChannelAdapter<SlackAccount> = {
  id: "slack",
  textChunkLimit: (account) => account?.textChunkLimit ?? 8000,
  chunkMode: (account) => account?.streaming.chunkMode ?? "length",
  send: sendSlackMessage,
  sendFile: sendSlackFile,
  maxFileBytes: (account) =>
    Math.min(SLACK_UPLOAD_MAX_BYTES, (account?.mediaMaxMb ?? 20) * 1024 * 1024),
  reconcile: reconcileSlackMessage,
  // Every post carries its chunk's marker; only a response_url reply leaves none (send.ts).
  reconcilesChunk: (chunk) => !chunk.route.extra?.responseUrl,
  fetchAttachment: fetchSlackFile,
  participatedInThread: slackParticipatedInThread,
  progress: slackProgress,
};

/**
 * Slack over HTTP Request URLs (Events API, slash commands, interactivity), or Socket Mode through
 * the companion (`mode: "socket"`), + the Web API for replies.
 */
export const slackChannel: ChannelDefinition<SlackChannelConfig, SlackAccount> = {
  id: "slack",
  account: slackAccount,
  requirements: slackRequirements,
  configSchema: slackChannelSchema,
  webhook: slackWebhook,
  socket: slackSocket,
  outbound: slackAdapter,
  groupAllowlistKey: "channels",
};

/** What the channel list (../manifests.ts) loads. */
export default slackChannel;
