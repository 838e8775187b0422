import type { ConnectorFactory } from "../connector.ts";

/**
 * A channel's companion connector lives in the channel's folder,
 * `functions/channels/<id>/companion/connector.ts`, exporting `connector`: this list is not kept by
 * hand. The import below names the folder with the channel in it, so esbuild bundles every file
 * that matches (and tsx, in `npm run dev`, loads the one asked for); the companion loads a
 * channel's connector the first time the Worker lists an account of it.
 */
async function loadConnector(channel: string): Promise<ConnectorFactory | undefined> {
  // Channel ids come from the Worker's account list: only a plain id may become part of a path.
  if (!/^[a-z][a-z0-9-]*$/.test(channel)) return undefined;
  let module: { connector?: unknown };
  try {
    module = await import(`../../../functions/channels/${channel}/companion/connector.ts`);
  } catch (error) {
    if (isMissingModule(error)) return undefined;
    throw error;
  }
  if (typeof module.connector !== "function")
    throw new Error(
      `functions/channels/${channel}/companion/connector.ts exports no \`connector\``,
    );
  return module.connector as ConnectorFactory;
}

/** No such file: tsx's ERR_MODULE_NOT_FOUND, or the bundle's "Module not found in bundle". */
function isMissingModule(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : "";
  return (
    (code === "ERR_MODULE_NOT_FOUND" && message.includes("/companion/connector.ts")) ||
    message.startsWith("Module not found in bundle")
  );
}

const loaded = new Map<string, Promise<ConnectorFactory | undefined>>();

/** The connector of `channel`, or undefined when the channel has none (a webhook-only channel). */
export function connectorFor(channel: string): Promise<ConnectorFactory | undefined> {
  let found = loaded.get(channel);
  if (!found) loaded.set(channel, (found = loadConnector(channel)));
  return found;
}

/**
 * Where the companion finds connectors: `extra` first (a test's own connectors), then each channel's
 * folder.
 */
export function connectorSource(
  extra: Record<string, ConnectorFactory> = {},
): (channel: string) => Promise<ConnectorFactory | undefined> {
  return async (channel) => extra[channel] ?? (await connectorFor(channel));
}
