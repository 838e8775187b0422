import { webhookRouteTable } from "../../functions/channels/webhook-routes.ts";
import { allSocketAccounts } from "../../functions/channels/companion/socket-accounts.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { channelSimulators } from "./registry.ts";
import type { RunningFake } from "./simulator.ts";
import type { SimulateState } from "./state.ts";

export interface SimulatedPlatforms {
  /** The config with every simulated channel pointed at its fake. */
  raw: Record<string, unknown>;
  /** Generated test secrets the Worker needs (only names that were not set). */
  vars: Record<string, string>;
  /** What the dev companion's environment gets (PreparedChannel.companionEnv of every channel). */
  companionEnv: Record<string, string>;
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
  const companionEnv: Record<string, string> = {};
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
      Object.assign(companionEnv, prepared.companionEnv);
      channels.push({ id: simulator.id, fakeUrl: fake.url, secrets: prepared.secrets });
    }
  } catch (error) {
    await Promise.all(fakes.map((fake) => fake.stop().catch(() => undefined)));
    throw error;
  }
  return {
    raw: { ...raw, channels: nextBlocks },
    vars: added,
    companionEnv,
    channels,
    stop: async () => {
      await Promise.all(fakes.map((fake) => fake.stop().catch(() => undefined)));
    },
  };
}

/**
 * The state `edgeclaw simulate` reads: how each channel's default account takes messages. An
 * account the companion serves (Discord, Mattermost, Slack Socket Mode, Telegram polling) is
 * simulated over its socket — even where the channel also has a webhook route (Discord's
 * interactions); otherwise the default account's (or the first) webhook URL on `gatewayUrl`.
 * `env` is the Worker's (an account's server URL may come from it).
 */
export function simulateState(
  platforms: SimulatedPlatforms,
  gatewayUrl: string,
  env: Readonly<Record<string, string>>,
  companionTapUrl?: string,
): SimulateState {
  const config = parseConfig(platforms.raw);
  const routes = [...webhookRouteTable(config).values()];
  const socketDefaults = allSocketAccounts(config, env)
    .filter(({ account }) => account.accountId === "default")
    .map(({ definition }) => definition.id);
  const state: SimulateState = {
    channels: {},
    ...(companionTapUrl ? { companionTapUrl } : {}),
  };
  for (const channel of platforms.channels) {
    const simulator = channelSimulators.find((candidate) => candidate.id === channel.id);
    if (simulator?.socket && socketDefaults.includes(channel.id)) {
      state.channels[channel.id] = {
        fakeUrl: channel.fakeUrl,
        via: "companion",
        secrets: channel.secrets,
      };
      continue;
    }
    const own = routes.filter((entry) => entry.definition.id === channel.id);
    const route = (own.find((entry) => entry.route.accountId === "default") ?? own[0])?.route;
    if (route && simulator?.webhook)
      state.channels[channel.id] = {
        fakeUrl: channel.fakeUrl,
        via: "webhook",
        webhookUrl: `${gatewayUrl}${route.path}`,
        secrets: channel.secrets,
      };
  }
  return state;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
