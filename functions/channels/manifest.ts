import type * as z from "zod";

/**
 * What the gateway knows of a channel without loading its runtime:
 * `functions/channels/<id>/manifest.ts`, which imports nothing but the channel's config module. The
 * list of channels (manifests.ts) pairs each manifest with its definition; the config
 * (gateway-config.ts) is composed from the manifests alone, and the people-facing lists (the dev
 * banner, the control page, the docs) name a channel by its manifest.
 */
export interface ChannelManifest {
  id: string;
  /** For people: "LINE", "Microsoft Teams". */
  label: string;
  /** The schema of `channels.<id>`: the same the definition carries. */
  configSchema: z.ZodType;
  /** The channel's page, from the repository root. */
  docsPage: string;
}
