import type { ChannelAdapter } from "./adapter.ts";
import type { ChannelDefinition } from "./channel.ts";
import { OPERATOR_CHANNELS } from "../core/operator-channels.ts";
import { addChannelConfigSchema } from "./gateway-config.ts";
import { slackChannel } from "./slack/index.ts";
import { telegramChannel } from "./telegram/index.ts";
import { smsChannel } from "./sms/index.ts";
import { lineChannel } from "./line/index.ts";
import { googleChatChannel } from "./googlechat/index.ts";
import { feishuChannel } from "./feishu/index.ts";
import { msTeamsChannel } from "./msteams/index.ts";
import { discordChannel } from "./discord/index.ts";
import { mattermostChannel } from "./mattermost/index.ts";

/**
 * Every channel the Worker serves. Adding a channel = one folder under functions/channels/, one
 * line in this list (plus its import) and its config schema in gateway-config.ts. Keep one entry
 * per line: several channels land in parallel.
 */
const builtInChannels: ChannelDefinition[] = [
  slackChannel,
  telegramChannel,
  smsChannel,
  lineChannel,
  googleChatChannel,
  feishuChannel,
  msTeamsChannel,
  discordChannel,
  mattermostChannel,
];

const registered = new Map<string, ChannelDefinition>();
for (const definition of builtInChannels) registered.set(definition.id, definition);

/** The channels in force, in registration order. */
export function channelDefinitions(): ChannelDefinition[] {
  return [...registered.values()];
}

/**
 * Adds a channel beside the built-in ones (a test-only channel from the test setup). Must run
 * before the first config is parsed, since its `configSchema` joins the gateway's config schema
 * then (gateway-config.ts refuses it after).
 */
export function registerChannel(definition: ChannelDefinition): void {
  if (registered.has(definition.id))
    throw new Error(`channel ${definition.id} is already registered`);
  addChannelConfigSchema(definition.id, definition.configSchema);
  registered.set(definition.id, definition);
}

export function channelDefinition(channel: string): ChannelDefinition | undefined {
  return registered.get(channel);
}

/**
 * Channels whose replies go back on the HTTP response itself (no outbound platform API): the
 * operator's own channels (functions/core/operator-channels.ts), whose senders triage trusts as the operator.
 */
export const HTTP_CHANNELS: ReadonlySet<string> = OPERATOR_CHANNELS;

export function adapterFor(channel: string): ChannelAdapter | undefined {
  return registered.get(channel)?.outbound;
}
