import type { ChannelSimulator } from "./simulator.ts";
import { slackSimulator } from "./slack.ts";

/** One simulator per channel that can be tried locally with no account; one entry per line. */
export const channelSimulators: ChannelSimulator[] = [
  slackSimulator,
];

export function simulatorFor(channel: string): ChannelSimulator | undefined {
  return channelSimulators.find((simulator) => simulator.id === channel);
}
