import type { ChannelManifest } from "../manifest.ts";
import { matrixChannelSchema } from "./config.ts";

/** Matrix: what the gateway knows of the channel without loading it (../manifest.ts). */
export const manifest: ChannelManifest = {
  id: "matrix",
  label: "Matrix",
  configSchema: matrixChannelSchema,
  docsPage: "docs/channels/matrix.md",
};
