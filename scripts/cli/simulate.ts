import { resolve } from "node:path";
import * as z from "zod";
import { channelSimulators, simulatorFor } from "../simulate/registry.ts";
import { simulateOnce, type DecisionLookup, type SimulateOutcome } from "../simulate/send.ts";
import { readSimulateState } from "../simulate/state.ts";
import { readLiveDevState } from "../lib/data-dir-lock.ts";
import type { CommandSpec } from "./command-spec.ts";
import { adminRequest, CliError, UsageError, type Connection } from "./http.ts";

/**
 * `edgeclaw simulate <channel> "text"`: plays the platform against the local `npm run dev` started
 * with EDGECLAW_SIMULATE=1 — builds and signs the webhook exactly as the platform would, posts it,
 * and prints the reply the simulated platform received. When the Worker turns the message away
 * (access denied, not allowlisted, mention required, pairing) it prints the reason the Worker
 * decided and the config key that would change it, at once instead of after `--timeout`. Needs no
 * account and no internet.
 */
export const SIMULATE_COMMAND: CommandSpec = {
  name: "simulate",
  args: ["channel", "text"],
  options: { from: "id", group: "id", thread: "id", timeout: "seconds" },
  summary: `send a message as the platform would to a local EDGECLAW_SIMULATE=1 dev (${channelSimulators.map((s) => s.id).join(", ")}) and print the reply, or why there is none`,
  async run({ args, options, print, connection }) {
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
    const outcome = await simulateOnce(simulator, target, message, {
      timeoutMs: timeout * 1000,
      decisionOf: decisionLookup(connection),
      ...(state.companionTapUrl ? { tapUrl: state.companionTapUrl } : {}),
    }).catch((error: unknown) => {
      // The companion never connected to the fake, or the fake is gone: say so, not a stack.
      throw new CliError(error instanceof Error ? error.message : String(error));
    });
    print(outcome, () => describeOutcome(channel, outcome, timeout));
    const answered = outcome.replies.length > 0 && outcome.decision?.outcome !== "refused";
    return outcome.status >= 300 || !answered ? 1 : 0;
  },
};

const decisionSchema = z.object({
  sessionKey: z.string(),
  dedupKey: z.string(),
  outcome: z.enum([
    "pending",
    "accepted",
    "pairing",
    "refused",
    "no-mention",
    "context",
    "command",
    "failed",
  ]),
  reason: z.string().optional(),
  configKey: z.string().optional(),
});

/** Reads the decision from the dev's admin API; an older Worker or an unreachable one just says nothing. */
function decisionLookup(connection: () => Connection): DecisionLookup {
  return async ({ sessionKey, dedupKey }) => {
    try {
      const json = await adminRequest(
        connection(),
        "GET",
        `/sessions/${encodeURIComponent(sessionKey)}/events/${encodeURIComponent(dedupKey)}`,
      );
      return decisionSchema.parse(json);
    } catch {
      return undefined;
    }
  };
}

/** What the user reads: the replies as the platform shows them, and why the Worker gave none. */
export function describeOutcome(
  channel: string,
  outcome: SimulateOutcome,
  timeout: number,
): string {
  if (outcome.via === "companion" && outcome.status >= 300)
    return `the Worker did not store the event the companion forwarded: ${outcome.error}`;
  if (outcome.status >= 300) return `the gateway answered ${outcome.status}; nothing was delivered`;
  const lines = outcome.replies.map((reply) => `${channel} ▸ ${reply}`);
  // "delivered (200)": the webhook's answer; over a socket, the companion forwarded it and the Worker stored it.
  const delivered = `delivered (${outcome.via === "companion" ? "over the companion" : outcome.status})`;
  const decision = outcome.decision;
  const key = decision?.configKey;
  switch (decision?.outcome) {
    case "pairing":
      lines.push(
        `(not answered by the agent: ${decision.reason}; let the sender in with \`npx edgeclaw pairing approve ${channel} <code>\`, or list their id in ${key})`,
      );
      break;
    case "refused":
      lines.push(
        `${delivered}; refused by the access policy: ${decision.reason}`,
        ...(key ? [`  the config key that would change it: ${key}`] : []),
        ...(decision.reason?.startsWith("pairing pending")
          ? [`  pending codes: npx edgeclaw pairing list ${channel}`]
          : []),
      );
      break;
    case "no-mention":
      lines.push(
        `${delivered}; ${decision.reason}`,
        `  mention the bot in the text, or set ${key}: false`,
      );
      break;
    case "context":
    case "failed":
      lines.push(`${delivered}; ${decision.outcome}: ${decision.reason}`);
      break;
    default:
      if (!outcome.replies.length)
        lines.push(
          decision?.outcome === "accepted"
            ? `${delivered}; accepted for a run, but no reply within ${timeout} s (the dev terminal says why)`
            : outcome.dropped?.length && !decision
              ? `${delivered}; nothing was taken from it: ${outcome.dropped.join("; ")}`
              : `${delivered}; no reply within ${timeout} s`,
        );
  }
  return lines.join("\n");
}
