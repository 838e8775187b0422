import type { ChannelDefinition } from "./channel.ts";
import type { ChannelManifest } from "./manifest.ts";
import { manifest as slack } from "./slack/manifest.ts";
import { manifest as telegram } from "./telegram/manifest.ts";
import { manifest as sms } from "./sms/manifest.ts";
import { manifest as line } from "./line/manifest.ts";
import { manifest as googlechat } from "./googlechat/manifest.ts";
import { manifest as feishu } from "./feishu/manifest.ts";
import { manifest as msteams } from "./msteams/manifest.ts";
import { manifest as discord } from "./discord/manifest.ts";
import { manifest as mattermost } from "./mattermost/manifest.ts";
import { manifest as matrix } from "./matrix/manifest.ts";
import { manifest as whatsapp } from "./whatsapp/manifest.ts";
import { manifest as signal } from "./signal/manifest.ts";
import { manifest as whatsappcloud } from "./whatsappcloud/manifest.ts";

/** A registered channel: its manifest, and its definition (its folder's index.ts, default export). */
export interface RegisteredChannel {
  manifest: ChannelManifest;
  /** Loads the channel's runtime: only the registry (registry.ts) calls it. */
  load(): Promise<{ default: ChannelDefinition }>;
}

function channel(
  manifest: ChannelManifest,
  load: () => Promise<{ default: ChannelDefinition }>,
): RegisteredChannel {
  return { manifest, load };
}

/**
 * Every channel the gateway serves, in order: the one list. Adding a channel is its folder under
 * functions/channels/ (with its manifest.ts), one line here (and its manifest's import) and its
 * docs page in the docs navigation. The definition is imported when the registry asks for it, so a
 * reader of the config alone (a CLI command, the docs generator) never loads a channel's send code
 * or platform SDK; the Worker's bundle holds them all the same (the bundler inlines the import).
 * Keep one entry per line: several channels land in parallel.
 */
export const registeredChannels: readonly RegisteredChannel[] = [
  channel(slack, () => import("./slack/index.ts")),
  channel(telegram, () => import("./telegram/index.ts")),
  channel(sms, () => import("./sms/index.ts")),
  channel(line, () => import("./line/index.ts")),
  channel(googlechat, () => import("./googlechat/index.ts")),
  channel(feishu, () => import("./feishu/index.ts")),
  channel(msteams, () => import("./msteams/index.ts")),
  channel(discord, () => import("./discord/index.ts")),
  channel(mattermost, () => import("./mattermost/index.ts")),
  channel(matrix, () => import("./matrix/index.ts")),
  channel(whatsapp, () => import("./whatsapp/index.ts")),
  channel(signal, () => import("./signal/index.ts")),
  channel(whatsappcloud, () => import("./whatsappcloud/index.ts")),
];

/** The manifests, in the list's order. */
export const channelManifests: readonly ChannelManifest[] = registeredChannels.map(
  (entry) => entry.manifest,
);
