import { enabledAccounts } from "../accounts.ts";
import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import { SLACK_ENV, slackAccount, type SlackChannelConfig } from "./config.ts";

/**
 * What each enabled Slack account needs: the bot token always (replies); over HTTP the signing
 * secret (verify), over Socket Mode the app-level token (the companion's connection).
 */
export function slackRequirements(slack: SlackChannelConfig): AccountRequirements[] {
  return enabledAccounts(slack, (id) => slackAccount(slack, id)).map((account) => {
    const source = (field: keyof typeof SLACK_ENV) =>
      credentialSource("slack", slack, account, field, [SLACK_ENV[field]]);
    const needs = [need("bot token", "replies cannot be sent", source("botToken"))];
    if (!account.mode || account.mode === "http")
      needs.push(
        need("signing secret", "every Slack request is refused (401)", source("signingSecret")),
      );
    if (account.mode === "socket")
      needs.push(
        need("app-level token", "the companion cannot open Socket Mode", source("appToken")),
      );
    return {
      accountId: account.accountId,
      key: accountKey("slack", slack, account.accountId),
      needs,
    };
  });
}
