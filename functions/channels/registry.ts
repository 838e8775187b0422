import type { ChannelAdapter } from "./adapter.ts";
import type { ChannelDefinition } from "./channel.ts";
import { OPERATOR_CHANNELS } from "../core/operator-channels.ts";
import { addChannelConfigSchema } from "./gateway-config.ts";
import { registeredChannels } from "./manifests.ts";

/**
 * Every channel the Worker serves: each registered channel's definition (manifests.ts is the one
 * list), loaded once when this module is first evaluated. The manifest and its definition must agree
 * on the id and the config schema, which the gateway's config (gateway-config.ts) takes from the
 * manifest.
 */
const builtInChannels: ChannelDefinition[] = await Promise.all(
  registeredChannels.map(async ({ manifest, load }) => {
    const definition = (await load()).default;
    if (definition.id !== manifest.id || definition.configSchema !== manifest.configSchema)
      throw new Error(
        `functions/channels/${manifest.id}/manifest.ts and its definition (${definition.id}) disagree on the id or the config schema`,
      );
    return definition;
  }),
);

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
