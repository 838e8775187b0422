import type { WebhookPieces, WebhookRoute } from "../channel.ts";
import { defaultWebhookAck } from "../webhook-ack.ts";
import { mattermostCommandCallback } from "./command-callback.ts";
import {
  mattermostAccounts,
  type MattermostAccount,
  type MattermostChannelConfig,
} from "./config.ts";
import {
  INTERACTIONS_PATH_PREFIX,
  MATTERMOST_INTERACTION_MAX_BODY_BYTES,
  parseInteraction,
  verifyInteraction,
} from "./interactions.ts";

/**
 * The two HTTP endpoints Mattermost calls on the Worker, as one channel's webhook pieces: native
 * slash command callbacks (command-callback.ts) and button clicks (interactions.ts,
 * `/mattermost/interactions/<accountId>`). Each route says which one it is.
 */
export type MattermostEndpoint = MattermostAccount & { endpoint: "command" | "interaction" };

const asAccount = (route: WebhookRoute<MattermostEndpoint>): WebhookRoute<MattermostAccount> =>
  route;

export const mattermostWebhook: WebhookPieces<MattermostEndpoint, MattermostChannelConfig> = {
  routes(root) {
    const commands = mattermostCommandCallback
      .routes(root)
      .map((route) => ({ ...route, account: { ...route.account, endpoint: "command" as const } }));
    const accounts = mattermostAccounts(root);
    const clicks = accounts.map((account) => ({
      path: `${INTERACTIONS_PATH_PREFIX}${account.accountId}`,
      accountId: account.accountId,
      label:
        accounts.length > 1
          ? `Mattermost buttons (account ${account.accountId})`
          : "Mattermost buttons",
      account: { ...account, endpoint: "interaction" as const },
    }));
    return [...commands, ...clicks];
  },
  maxBodyBytes: (route) =>
    route.account.endpoint === "command"
      ? mattermostCommandCallback.maxBodyBytes(asAccount(route))
      : MATTERMOST_INTERACTION_MAX_BODY_BYTES,
  verify: (request, route, env) =>
    route.account.endpoint === "command"
      ? mattermostCommandCallback.verify(request, asAccount(route), env)
      : verifyInteraction(request, asAccount(route), env),
  parse: (request, route, env) =>
    route.account.endpoint === "command"
      ? mattermostCommandCallback.parse(request, asAccount(route), env)
      : parseInteraction(request, route.account),
  ack(result, route) {
    if (route.account.endpoint === "command")
      return mattermostCommandCallback.ack!(result, asAccount(route));
    // Mattermost reads a JSON answer (`update`, `ephemeral_text`); an empty one leaves the post as it is.
    const ack = defaultWebhookAck(result);
    return result.allStored ? Response.json({}, { headers: ack.headers }) : ack;
  },
};
