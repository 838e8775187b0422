import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { channelIds } from "../../functions/channels/gateway-config.ts";

/**
 * The Node-side pieces of a channel live in its folder, beside the Worker's: its simulator and fake
 * platform (`simulate/simulator.ts`), its CLI commands (`cli.ts`), its test kit (`test-kit.ts`).
 * The Worker never imports them, so they cost its bundle nothing; what reads them (the simulators,
 * the CLI, the test setup) finds them here, for each channel the gateway knows (gateway-config.ts:
 * the channels' manifests only, no runtime), in the order of the list (functions/channels/manifests.ts). So adding a channel touches its folder and the registry's line, never these readers.
 *
 * Each piece file exports its piece under one fixed name (`simulator`, `commands`, `testKit`);
 * `accept` says whether what it found there is such a piece, so a file that exports something else
 * fails here, naming the file, instead of later.
 *
 * `load` imports a channel's piece with a template literal written at the caller
 * (`` (id) => import(`../../functions/channels/${id}/cli.ts`) ``): esbuild then puts every
 * channel's piece in the CLI's and dev's bundles (scripts/lib/node-bundle.mjs), which it cannot do
 * for a path computed at run time.
 */
export async function channelPieces<T>(
  file: string,
  exportName: string,
  accept: (value: unknown) => value is T,
  load: (channel: string) => Promise<Record<string, unknown>>,
): Promise<Array<{ channel: string; piece: T }>> {
  const found: Array<{ channel: string; piece: T }> = [];
  for (const id of channelIds()) {
    if (!existsSync(join(channelsDir, id, file))) continue;
    const module = await load(id);
    const piece = module[exportName];
    if (!accept(piece))
      throw new Error(`functions/channels/${id}/${file} does not export a valid \`${exportName}\``);
    found.push({ channel: id, piece });
  }
  return found;
}

const channelsDir = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "functions",
  "channels",
);
