import type { ConnectorFactory } from "../connector.ts";
import { telegramConnector } from "./telegram.ts";
import { slackConnector } from "./slack.ts";
import { discordConnector } from "./discord.ts";
import { mattermostConnector } from "./mattermost.ts";

/** channel id → connector; one line per connector (several land in parallel: keep one per line). */
export const connectorFactories: Record<string, ConnectorFactory> = {
  telegram: (account) => telegramConnector(account),
  slack: (account) => slackConnector(account),
  discord: (account) => discordConnector(account),
  mattermost: (account) => mattermostConnector(account),
};
