import type { ChannelKit } from "../kit.ts";
import { feishuKit } from "./feishu.ts";
import { googleChatKit } from "./googlechat.ts";
import { lineKit } from "./line.ts";
import { msTeamsKit } from "./msteams.ts";
import { slackKit } from "./slack.ts";
import { smsKit } from "./sms.ts";
import { telegramKit } from "./telegram.ts";

/** One kit per webhook channel that takes direct messages (the DM cases run over these). */
export const DM_KITS: ChannelKit[] = [
  slackKit,
  telegramKit,
  smsKit,
  lineKit,
  googleChatKit,
  feishuKit,
  msTeamsKit,
];
