import type { EdgeclawConfig } from "../config/schema.ts";
import type { ReplyRoute } from "../core/envelope.ts";
import type { SendContext } from "./adapter.ts";
import type { ChannelDefinition } from "./channel.ts";
import { channelDefinition } from "./registry.ts";

/**
 * How the pipeline hands a channel's pieces their settings: `channels.<id>` is validated and
 * defaulted once, when the config is parsed with the gateway's composed schema (gateway-config.ts);
 * here it is read back as parsed, and one account is resolved from it by the channel's own rules
 * (`ChannelDefinition.account`). No channel re-parses or re-derives its block.
 */

/** `channels.<id>` as the gateway's config parsed it, or undefined when the config has none. */
export function channelRoot(config: EdgeclawConfig, channelId: string): unknown {
  const block = config.channels[channelId];
  return typeof block === "object" && block !== null ? block : undefined;
}

/** `channels.<id>` of `definition`, typed by the channel's own schema. */
export function rootOf<Config>(
  definition: ChannelDefinition<Config, unknown, unknown>,
  config: EdgeclawConfig,
): Config | undefined {
  return channelRoot(config, definition.id) as Config | undefined;
}

/** The settings in force for one account of `definition`, or undefined without a block. */
export function accountOf<Config, Account>(
  definition: ChannelDefinition<Config, Account, unknown>,
  config: EdgeclawConfig,
  accountId: string,
): Account | undefined {
  const root = channelRoot(config, definition.id) as Config | undefined;
  return root === undefined ? undefined : definition.account(root, accountId);
}

/** The same for a channel by id (an unknown channel has no account). */
export function channelAccount(
  config: EdgeclawConfig,
  channelId: string,
  accountId: string,
): unknown {
  const definition = channelDefinition(channelId);
  return definition ? accountOf(definition, config, accountId) : undefined;
}

/** A call's context for one account of `definition` (typed by the channel's own account). */
export function contextFor<Config, Account>(
  definition: ChannelDefinition<Config, Account, unknown>,
  base: Omit<SendContext, "account">,
  accountId: string,
): SendContext<Account> {
  return { ...base, account: accountOf(definition, base.config, accountId) };
}

/** A call's context for the account `route` belongs to. */
export function sendContextFor(
  base: Omit<SendContext, "account">,
  route: Pick<ReplyRoute, "channel" | "accountId">,
): SendContext {
  return { ...base, account: channelAccount(base.config, route.channel, route.accountId) };
}

/** What the pipeline calls per channel piece that reads the whole block (routes, socket accounts, requirements). */
export function withRoot<Config, T>(
  definition: ChannelDefinition<Config, unknown, unknown>,
  config: EdgeclawConfig,
  piece: (root: Config) => T[],
): T[] {
  const root = channelRoot(config, definition.id) as Config | undefined;
  return root === undefined ? [] : piece(root);
}
