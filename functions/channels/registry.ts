import type { ChannelAdapter } from "./adapter.ts";
import { OPERATOR_CHANNELS } from "./operator-channels.ts";
import { slackAdapter } from "./slack/index.ts";

/**
 * Every channel the Worker serves over webhooks. Adding a channel = one folder under
 * functions/channels/ and one line here.
 */
export const channelAdapters: ChannelAdapter[] = [slackAdapter];

/**
 * Channels whose replies go back on the HTTP response itself (no outbound platform API): the
 * operator's own channels (operator-channels.ts), whose senders triage trusts as the operator.
 */
export const HTTP_CHANNELS: ReadonlySet<string> = OPERATOR_CHANNELS;

export function adapterFor(channel: string): ChannelAdapter | undefined {
  return channelAdapters.find((adapter) => adapter.id === channel);
}
