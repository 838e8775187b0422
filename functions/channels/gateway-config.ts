import * as z from "zod";
import { configFromEnvWith, parseConfigWith } from "../config/load.ts";
import { baseConfigSchema, type EdgeclawConfig } from "../config/schema.ts";
import { channelManifests } from "./manifests.ts";

/**
 * The config the gateway runs on: the base schema (functions/config/schema.ts, which knows no
 * channel) with `channels.<id>` validated by each registered channel's own schema, defaults
 * applied. Built from the channels' manifests (manifests.ts) alone — their config modules, no send
 * code, no platform SDK — so reading the config never loads a channel's runtime. Every caller that
 * needs the config in force reads it here.
 */
const channelConfigSchemas = new Map<string, z.ZodType>(
  channelManifests.map((manifest) => [manifest.id, manifest.configSchema]),
);
let composed: z.ZodType<EdgeclawConfig> | undefined;

/**
 * The composed schema, built on first use (`safeExtend`: it keeps the base's cross-key checks); from
 * then on the set of channels is fixed, so a channel
 * added later (addChannelConfigSchema) would go unvalidated and is refused instead.
 */
export function gatewayConfigSchema(): z.ZodType<EdgeclawConfig> {
  composed ??= baseConfigSchema.safeExtend({
    channels: z
      .object(
        Object.fromEntries(
          [...channelConfigSchemas].map(([id, schema]) => [id, schema.optional()]),
        ),
      )
      .loose()
      .default({}),
  }) as unknown as z.ZodType<EdgeclawConfig>;
  return composed;
}

/**
 * The ids of the channels the gateway knows, in registration order: what the Node-side readers of a
 * channel's folder (simulators, CLI commands, test kits) go through without loading any channel's
 * runtime.
 */
export function channelIds(): string[] {
  return [...channelConfigSchemas.keys()];
}

/** The schema `channels.<id>` is validated with, if the channel is known. */
export function channelConfigSchema(channelId: string): z.ZodType | undefined {
  return channelConfigSchemas.get(channelId);
}

/**
 * Adds the block schema of a channel beside the built-in ones (a test-only channel). Must run
 * before the first config is parsed, since the composed schema is fixed then.
 */
export function addChannelConfigSchema(channelId: string, schema: z.ZodType): void {
  if (channelConfigSchemas.has(channelId))
    throw new Error(`channel ${channelId} already has a config schema`);
  if (composed)
    throw new Error(
      `channel ${channelId} registered after the config schema was built; register it before the first config parse`,
    );
  channelConfigSchemas.set(channelId, schema);
}

/** Validates a parsed config object; errors name the key path and the reason. */
export function parseConfig(raw: unknown): EdgeclawConfig {
  return parseConfigWith(gatewayConfigSchema(), raw);
}

/**
 * The config in force for this isolate: `env.EDGECLAW_CONFIG` (JSON) when set, else the config the
 * build bundled, else the defaults (functions/config/load.ts).
 */
export function configFromEnv(env: { EDGECLAW_CONFIG?: string }): EdgeclawConfig {
  return configFromEnvWith(gatewayConfigSchema(), env);
}
