import { channelPieces } from "../lib/channel-pieces.ts";
import type { ChannelSimulator } from "./simulator.ts";

function isSimulator(value: unknown): value is ChannelSimulator {
  const candidate = value as ChannelSimulator | undefined;
  return typeof candidate?.id === "string" && typeof candidate.startFake === "function";
}

/**
 * One simulator per channel that can be tried locally with no account: each channel's
 * `functions/channels/<id>/simulate/simulator.ts`, in the registry's order.
 */
export const channelSimulators: ChannelSimulator[] = (
  await channelPieces(
    "simulate/simulator.ts",
    "simulator",
    isSimulator,
    (id) => import(`../../functions/channels/${id}/simulate/simulator.ts`),
  )
).map(({ channel, piece }) => {
  if (piece.id !== channel)
    throw new Error(`functions/channels/${channel}/simulate/simulator.ts simulates "${piece.id}"`);
  return piece;
});

export function simulatorFor(channel: string): ChannelSimulator | undefined {
  return channelSimulators.find((simulator) => simulator.id === channel);
}
