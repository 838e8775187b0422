/**
 * Installs take packages only from the configured channels, through the sandbox's egress: a named
 * channel (conda-forge) or an https:// one needs the network, and with docker.allowedHosts set its
 * host must be in the list (the container enforces the list; the cascade refuses up front instead
 * of waiting for a solve that cannot reach it). file:// channels (a mirror inside the image) need
 * nothing.
 */
export function channelHost(channel: string): string | undefined {
  if (channel.startsWith("file:")) return undefined;
  if (/^https?:\/\//.test(channel)) return new URL(channel).hostname;
  return "conda.anaconda.org";
}

export function egressProblem(
  channels: readonly string[],
  network: { allowed: boolean; allowedHosts: readonly string[] },
): string | undefined {
  const hosts = [...new Set(channels.map(channelHost).filter((h): h is string => Boolean(h)))];
  if (!hosts.length) return undefined;
  if (!network.allowed)
    return `installs reach ${hosts.join(", ")} (agents.defaults.computeEnv.channels), but this sandbox has no network: set agents.defaults.sandbox.docker.network "bridge" with docker.allowedHosts ${JSON.stringify(hosts)}`;
  if (!network.allowedHosts.length) return undefined;
  const blocked = hosts.filter(
    (host) => !network.allowedHosts.some((glob) => globMatch(glob, host)),
  );
  if (blocked.length)
    return `installs reach ${blocked.join(", ")}, which agents.defaults.sandbox.docker.allowedHosts does not allow: add it`;
  return undefined;
}

function globMatch(glob: string, host: string): boolean {
  const pattern = new RegExp(
    `^${glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`,
    "i",
  );
  return pattern.test(host);
}
