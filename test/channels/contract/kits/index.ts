import type { ChannelKit } from "../kit.ts";
import type { SystemEventKit } from "../system-kit.ts";
import { discordSystemKit } from "./discord.ts";
import { feishuKit, feishuSystemKit } from "./feishu.ts";
import { googleChatKit, googleChatSystemKit } from "./googlechat.ts";
import { lineKit, lineSystemKit } from "./line.ts";
import { mattermostSystemKit } from "./mattermost.ts";
import { matrixSystemKit } from "./matrix.ts";
import { msTeamsKit, msTeamsSystemKit } from "./msteams.ts";
import { signalSystemKit } from "./signal.ts";
import { slackKit } from "./slack.ts";
import { slackSystemKit } from "./slack-system.ts";
import { smsKit } from "./sms.ts";
import { telegramKit, telegramSystemKit } from "./telegram.ts";
import { whatsappSystemKit } from "./whatsapp.ts";
import { whatsappCloudKit, whatsappCloudSystemKit } from "./whatsappcloud.ts";

/** One kit per webhook channel that takes direct messages (the DM cases run over these). */
export const DM_KITS: ChannelKit[] = [
  slackKit,
  telegramKit,
  smsKit,
  lineKit,
  googleChatKit,
  feishuKit,
  msTeamsKit,
  whatsappCloudKit,
];

/**
 * One system-event kit per channel in the registry (system-events.test.ts checks that none is
 * missing): the conversations and event kinds the cross-check holds to the message's decision.
 */
export const SYSTEM_KITS: SystemEventKit[] = [
  slackSystemKit,
  telegramSystemKit,
  lineSystemKit,
  googleChatSystemKit,
  feishuSystemKit,
  msTeamsSystemKit,
  discordSystemKit,
  mattermostSystemKit,
  matrixSystemKit,
  whatsappSystemKit,
  signalSystemKit,
  whatsappCloudSystemKit,
];

/** Channels that parse no system event at all, and why (the cross-check has nothing to hold them to). */
export const NO_SYSTEM_EVENTS: Record<string, string> = {
  sms: "Twilio posts only inbound messages (and status callbacks, which are not events from a sender)",
  relay: "the suite's test-only channel (test/channels/relay) parses messages only",
};
