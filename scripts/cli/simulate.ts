import { resolve } from "node:path";
import { channelSimulators, simulatorFor } from "../simulate/registry.ts";
import { simulateOnce } from "../simulate/send.ts";
import { readSimulateState } from "../simulate/state.ts";
import { readLiveDevState } from "../lib/data-dir-lock.ts";
import type { CommandSpec } from "./commands.ts";
import { CliError, UsageError } from "./http.ts";

/**
 * `edgeclaw simulate <channel> "text"`: plays the platform against the local `npm run dev` started
 * with EDGECLAW_SIMULATE=1 — builds and signs the webhook exactly as the platform would, posts it,
 * and prints the reply the simulated platform received. Needs no account and no internet.
 */
export const SIMULATE_COMMAND: CommandSpec = {
  name: "simulate",
  args: ["channel", "text"],
  options: { from: "id", group: "id", thread: "id", timeout: "seconds" },
  summary: `send a message as the platform would to a local EDGECLAW_SIMULATE=1 dev (${channelSimulators.map((s) => s.id).join(", ")}) and print the reply`,
  async run({ args, options, print }) {
    const [channel, text] = args as [string, string];
    const simulator = simulatorFor(channel);
    if (!simulator)
      throw new UsageError(
        `no simulator for "${channel}"; simulated channels: ${channelSimulators.map((s) => s.id).join(", ")}`,
      );
    const dataDir = resolve(process.env.EDGECLAW_DATA_DIR || ".edgeclaw/data");
    const state = readLiveDevState(dataDir) ? readSimulateState(dataDir) : undefined;
    if (!state)
      throw new CliError(
        `no simulated platforms running for ${dataDir}: start \`EDGECLAW_SIMULATE=1 npm run dev\` first`,
      );
    const target = state.channels[channel];
    if (!target)
      throw new CliError(
        `channels.${channel} is not simulated by that dev: add a channels.${channel} block to edgeclaw.json5 (it can be empty) and restart it`,
      );
    const timeout = options.timeout === undefined ? 60 : Number(options.timeout);
    if (!Number.isFinite(timeout) || timeout <= 0)
      throw new UsageError(`--timeout must be a number of seconds, got "${options.timeout}"`);
    const str = (value: unknown) => (typeof value === "string" ? value : undefined);
    const message = {
      text,
      from: str(options.from),
      group: str(options.group),
      thread: str(options.thread),
    };
    const outcome = await simulateOnce(simulator, target, message, { timeoutMs: timeout * 1000 });
    print(outcome, () => {
      if (outcome.status >= 300)
        return `the gateway answered ${outcome.status}; nothing was delivered`;
      if (!outcome.replies.length)
        return `delivered (${outcome.status}); no reply within ${timeout} s`;
      return outcome.replies.map((reply) => `${channel} ▸ ${reply}`).join("\n");
    });
    return outcome.status >= 300 || outcome.replies.length === 0 ? 1 : 0;
  },
};
