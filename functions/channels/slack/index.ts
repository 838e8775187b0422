import type { ChannelAdapter } from "../adapter.ts";
import { slackAccount, slackConfig } from "./config.ts";
import { mountSlack } from "./ingress.ts";
import { slackProgress } from "./progress.ts";
import { reconcileSlackMessage, sendSlackMessage } from "./send.ts";
import { fetchSlackFile } from "./files.ts";
import { slackParticipatedInThread } from "./threads.ts";

/** Slack over HTTP Request URLs (Events API, slash commands, interactivity) + the Web API for replies. */
export const slackAdapter: ChannelAdapter = {
  id: "slack",
  textChunkLimit(config, accountId) {
    const slack = slackConfig(config);
    return slack ? slackAccount(slack, accountId).textChunkLimit : 8000;
  },
  chunkMode(config, accountId) {
    const slack = slackConfig(config);
    return slack ? slackAccount(slack, accountId).streaming.chunkMode : "length";
  },
  mount: mountSlack,
  send: sendSlackMessage,
  reconcile: reconcileSlackMessage,
  fetchAttachment: fetchSlackFile,
  participatedInThread: slackParticipatedInThread,
  progress: slackProgress,
};
