import { describe, expect, it } from "vitest";
import {
  channelConfigSchema,
  gatewayConfigSchema,
  parseConfig,
} from "../../functions/channels/gateway-config.ts";
import { channelDefinitions, registerChannel } from "../../functions/channels/registry.ts";
import { baseConfigSchema } from "../../functions/config/schema.ts";
import { relayChannel } from "./relay/index.ts";

/** The config is composed at the top: the base schema knows no channel, the registry adds each. */
describe("the gateway's config", () => {
  it("validates each registered channel's block with that channel's own schema", () => {
    const definitions = channelDefinitions();
    expect(definitions.length).toBeGreaterThanOrEqual(10);
    for (const definition of definitions)
      expect(channelConfigSchema(definition.id), definition.id).toBe(definition.configSchema);
  });

  it("applies a channel's defaults and refuses its bad keys; other blocks and keys are kept", () => {
    const config = parseConfig({
      notYetRead: true,
      channels: { slack: { botToken: "xoxb-1" }, whatsapp: { dmPolicy: "open" } },
    });
    expect(config.channels.slack).toMatchObject({ textChunkLimit: 8000, enabled: true });
    expect(config.channels.whatsapp).toEqual({ dmPolicy: "open" });
    expect((config as Record<string, unknown>).notYetRead).toBe(true);
    expect(() => parseConfig({ channels: { slack: { textChunkLimit: 1 } } })).toThrow(
      /channels\.slack\.textChunkLimit/,
    );
    // The base schema alone leaves the channel blocks as written.
    const base = baseConfigSchema.parse({ channels: { slack: { botToken: "xoxb-1" } } });
    expect(base.channels.slack).toEqual({ botToken: "xoxb-1" });
  });

  it("refuses a channel registered after the schema was built: its block would go unvalidated", () => {
    gatewayConfigSchema();
    expect(() => registerChannel({ ...relayChannel, id: "late-channel" })).toThrow(
      /registered after the config schema was built/,
    );
    expect(channelDefinitions().map((definition) => definition.id)).not.toContain("late-channel");
  });
});
