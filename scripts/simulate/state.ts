import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";

/**
 * What a simulating `npm run dev` tells `edgeclaw simulate`: per channel, where its fake platform
 * listens, how its default account's messages arrive (a webhook to `webhookUrl`, or over the socket
 * the companion holds), and the (fake) secrets the platform signs with; and where the companion's
 * ingress answers can be read (`companionTapUrl`, see companion-tap.ts). Lives in the data dir
 * while dev runs (mode 0600) and is removed when it stops.
 */
export const SIMULATE_FILE = "simulate.json";

const simulateStateSchema = z.object({
  channels: z.record(
    z.string(),
    z.object({
      fakeUrl: z.string(),
      via: z.enum(["webhook", "companion"]).default("webhook"),
      webhookUrl: z.string().optional(),
      secrets: z.record(z.string(), z.string()),
    }),
  ),
  companionTapUrl: z.string().optional(),
});
export type SimulateState = z.input<typeof simulateStateSchema>;
export type SimulatedChannel = z.infer<typeof simulateStateSchema>["channels"][string];

export function writeSimulateState(dataDir: string, state: SimulateState): string {
  const file = join(dataDir, SIMULATE_FILE);
  writeFileSync(file, JSON.stringify(state, null, 2), { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

export function readSimulateState(
  dataDir: string,
): z.infer<typeof simulateStateSchema> | undefined {
  try {
    return simulateStateSchema.parse(
      JSON.parse(readFileSync(join(dataDir, SIMULATE_FILE), "utf8")),
    );
  } catch {
    return undefined;
  }
}

export function removeSimulateState(dataDir: string): void {
  rmSync(join(dataDir, SIMULATE_FILE), { force: true });
}
