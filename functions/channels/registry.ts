import type { ChannelAdapter } from "./adapter.ts";
import type { ChannelDefinition } from "./channel.ts";
import { OPERATOR_CHANNELS } from "../core/operator-channels.ts";
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
 * Every channel the Worker serves. Adding a channel = one folder under functions/channels/ and one
 * line in this list (plus its import). Keep one entry per line: several channels land in parallel.
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

/** Set once the config schema has read the list: a later registration would go unvalidated. */
let sealed = false;

/** The channels in force, in registration order. */
export function channelDefinitions(): ChannelDefinition[] {
  return [...registered.values()];
}

/** Read by the config schema when it is first built; later registrations are refused. */
export function sealChannelRegistry(): ChannelDefinition[] {
  sealed = true;
  return channelDefinitions();
}

/**
 * Adds a channel beside the built-in ones (a test-only channel from the test setup). Must run
 * before the first config is parsed, since its `configSchema` joins the config schema then.
 */
export function registerChannel(definition: ChannelDefinition): void {
  if (registered.has(definition.id))
    throw new Error(`channel ${definition.id} is already registered`);
  if (sealed)
    throw new Error(
      `channel ${definition.id} registered after the config schema was built; register it before the first config parse`,
    );
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
