import { describe, expect, it } from "vitest";
import {
  channelConfigSchema,
  gatewayConfigSchema,
  parseConfig,
} from "../../functions/channels/gateway-config.ts";
import {
  channelAccount,
  channelRoot,
  sendContextFor,
} from "../../functions/channels/channel-account.ts";
import {
  channelDefinition,
  channelDefinitions,
  registerChannel,
} from "../../functions/channels/registry.ts";
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
      channels: { slack: { botToken: "xoxb-1" }, imessage: { dmPolicy: "open" } },
    });
    expect(config.channels.slack).toMatchObject({ textChunkLimit: 8000, enabled: true });
    expect(config.channels.imessage).toEqual({ dmPolicy: "open" });
    expect((config as Record<string, unknown>).notYetRead).toBe(true);
    expect(() => parseConfig({ channels: { slack: { textChunkLimit: 1 } } })).toThrow(
      /channels\.slack\.textChunkLimit/,
    );
    // The base schema alone leaves the channel blocks as written.
    const base = baseConfigSchema.parse({ channels: { slack: { botToken: "xoxb-1" } } });
    expect(base.channels.slack).toEqual({ botToken: "xoxb-1" });
  });

  it("hands each piece its account from the block as parsed, never parsing it again", () => {
    const config = parseConfig({
      channels: {
        slack: { botToken: "xoxb-1", accounts: { ops: { textChunkLimit: 2000 } } },
      },
    });
    const slack = channelDefinition("slack")!;
    // The block the pipeline reads is the parsed one itself, defaults included.
    expect(channelRoot(config, "slack")).toBe(config.channels.slack);
    expect(channelAccount(config, "slack", "ops")).toMatchObject({
      accountId: "ops",
      textChunkLimit: 2000,
      botToken: "xoxb-1",
    });
    expect(slack.outbound.textChunkLimit(channelAccount(config, "slack", "ops"))).toBe(2000);
    expect(slack.outbound.textChunkLimit(channelAccount(config, "slack", "default"))).toBe(8000);
    // No block: no account, and the channel's own default.
    expect(channelAccount(parseConfig({}), "slack", "default")).toBeUndefined();
    expect(slack.outbound.textChunkLimit(undefined)).toBe(8000);
    expect(
      sendContextFor({ env: {}, config }, { channel: "slack", accountId: "ops" }),
    ).toMatchObject({
      account: { accountId: "ops" },
    });
  });

  it("refuses a channel registered after the schema was built: its block would go unvalidated", () => {
    gatewayConfigSchema();
    expect(() => registerChannel({ ...relayChannel, id: "late-channel" })).toThrow(
      /registered after the config schema was built/,
    );
    expect(channelDefinitions().map((definition) => definition.id)).not.toContain("late-channel");
  });
});
