import { webhookRouteTable } from "../../functions/channels/webhook-routes.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { channelSimulators } from "./registry.ts";
import type { RunningFake } from "./simulator.ts";
import type { SimulateState } from "./state.ts";

export interface SimulatedPlatforms {
  /** The config with every simulated channel pointed at its fake. */
  raw: Record<string, unknown>;
  /** Generated test secrets the Worker needs (only names that were not set). */
  vars: Record<string, string>;
  /** Everything but the webhook URLs, which need the gateway's address: see `simulateState`. */
  channels: Array<{ id: string; fakeUrl: string; secrets: Record<string, string> }>;
  stop(): Promise<void>;
}

/**
 * `EDGECLAW_SIMULATE=1`: a fake platform for every channel the config has a block for and a
 * simulator exists for, each on its own loopback port, with the channel's API base URLs pointed at
 * it and test secrets generated where none are set.
 */
export async function startSimulatedPlatforms(
  raw: Record<string, unknown>,
  vars: Readonly<Record<string, string>>,
): Promise<SimulatedPlatforms> {
  const blocks = isRecord(raw.channels) ? raw.channels : {};
  const fakes: RunningFake[] = [];
  const channels: SimulatedPlatforms["channels"] = [];
  const added: Record<string, string> = {};
  const nextBlocks: Record<string, unknown> = { ...blocks };
  try {
    for (const simulator of channelSimulators) {
      const block = blocks[simulator.id];
      if (!isRecord(block)) continue;
      const fake = await simulator.startFake();
      fakes.push(fake);
      const prepared = simulator.prepare(block, fake.url, { ...vars, ...added });
      nextBlocks[simulator.id] = prepared.block;
      Object.assign(added, prepared.env);
      channels.push({ id: simulator.id, fakeUrl: fake.url, secrets: prepared.secrets });
    }
  } catch (error) {
    await Promise.all(fakes.map((fake) => fake.stop().catch(() => undefined)));
    throw error;
  }
  return {
    raw: { ...raw, channels: nextBlocks },
    vars: added,
    channels,
    stop: async () => {
      await Promise.all(fakes.map((fake) => fake.stop().catch(() => undefined)));
    },
  };
}

/** The state `edgeclaw simulate` reads: each channel's default-account webhook URL on `gatewayUrl`. */
export function simulateState(platforms: SimulatedPlatforms, gatewayUrl: string): SimulateState {
  const routes = [...webhookRouteTable(parseConfig(platforms.raw)).values()];
  const state: SimulateState = { channels: {} };
  for (const channel of platforms.channels) {
    const own = routes.filter((entry) => entry.definition.id === channel.id);
    const route = (own.find((entry) => entry.route.accountId === "default") ?? own[0])?.route;
    if (route)
      state.channels[channel.id] = {
        fakeUrl: channel.fakeUrl,
        webhookUrl: `${gatewayUrl}${route.path}`,
        secrets: channel.secrets,
      };
  }
  return state;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
