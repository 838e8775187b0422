import type { ChannelSimulator } from "./simulator.ts";
import { slackSimulator } from "./slack.ts";
import { telegramSimulator } from "./telegram.ts";
import { smsSimulator } from "./sms.ts";
import { lineSimulator } from "./line.ts";
import { googleChatSimulator } from "./googlechat.ts";
import { feishuSimulator } from "./feishu.ts";
import { msTeamsSimulator } from "./msteams.ts";
import { discordSimulator } from "./discord.ts";
import { mattermostSimulator } from "./mattermost.ts";

/** One simulator per channel that can be tried locally with no account; one entry per line. */
export const channelSimulators: ChannelSimulator[] = [
  slackSimulator,
  telegramSimulator,
  smsSimulator,
  lineSimulator,
  googleChatSimulator,
  feishuSimulator,
  msTeamsSimulator,
  discordSimulator,
  mattermostSimulator,
];

export function simulatorFor(channel: string): ChannelSimulator | undefined {
  return channelSimulators.find((simulator) => simulator.id === channel);
}
