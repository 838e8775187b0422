import { parseConfig } from "../../functions/channels/gateway-config.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import type { BundleInputs } from "../lib/bundle-inputs.ts";
import { bundleDefineArgs } from "../lib/wrangler.ts";
import { startCompanionTap, type CompanionTap } from "./companion-tap.ts";
import { simulateState, startSimulatedPlatforms } from "./platforms.ts";
import { removeSimulateState, writeSimulateState } from "./state.ts";

export interface SimulatedDev {
  /** The bundle arguments and config with every simulated channel pointed at its fake. */
  defineArgs: string[];
  /** The config as bundled (the companion's dev key is added on top of it). */
  raw: Record<string, unknown>;
  config: EdgeclawConfig;
  /** Variables for the dev companion's environment (a connector that finds its fake there). */
  companionEnv: Record<string, string>;
  /**
   * The Worker URL to give the dev companion: a loopback pass-through that keeps the Worker's
   * ingress answers for `simulate` (companion-tap.ts).
   */
  companionWorkerUrl(gatewayUrl: string): Promise<string>;
  /** Once the gateway answers: writes the state `edgeclaw simulate` reads; returns banner lines. */
  ready(gatewayUrl: string, dataDir: string): string[];
  stop(dataDir: string): Promise<void>;
}

/**
 * `npm run dev` with EDGECLAW_SIMULATE=1: starts the simulated platforms, adds the generated test
 * secrets to `vars` (a name already set keeps its value), and rebundles the config pointed at them.
 */
export async function simulateForDev(
  inputs: BundleInputs,
  vars: Record<string, string>,
): Promise<SimulatedDev> {
  const platforms = await startSimulatedPlatforms(inputs.loaded.raw, vars);
  for (const [name, value] of Object.entries(platforms.vars)) vars[name] ??= value;
  let tap: CompanionTap | undefined;
  return {
    defineArgs: bundleDefineArgs(platforms.raw, inputs.workspace.seeds),
    raw: platforms.raw,
    config: parseConfig(platforms.raw),
    companionEnv: platforms.companionEnv,
    async companionWorkerUrl(gatewayUrl) {
      tap ??= await startCompanionTap(gatewayUrl);
      return tap.url;
    },
    ready(gatewayUrl, dataDir) {
      const state = simulateState(platforms, gatewayUrl, vars, tap?.url);
      writeSimulateState(dataDir, state);
      const ids = Object.keys(state.channels);
      if (!ids.length)
        return [
          "  Simulate: no channel to simulate (add a channels.<id> block, e.g. channels: { slack: {} })",
        ];
      return ids.map((id) => {
        const channel = state.channels[id]!;
        const how = channel.via === "companion" ? " (its socket held by the companion)" : "";
        return `  Simulated ${id} at ${channel.fakeUrl}${how}; try: npx edgeclaw simulate ${id} "hello"`;
      });
    },
    async stop(dataDir) {
      removeSimulateState(dataDir);
      await tap?.stop();
      await platforms.stop();
    },
  };
}
