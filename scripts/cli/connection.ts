import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { readLiveDevState } from "../lib/data-dir-lock.ts";
import { CliError, type Connection } from "./http.ts";

export const DEFAULT_URL = "http://127.0.0.1:8787";

/**
 * Where the gateway is and how to authenticate: --url / --token, else EDGECLAW_URL /
 * EDGECLAW_GATEWAY_TOKEN (OPENCLAW_GATEWAY_TOKEN), else the local `npm run dev` that owns the data
 * dir (EDGECLAW_DATA_DIR, default .edgeclaw/data): its URL and generated token come from its lock
 * file, written only while it runs.
 */
export function findConnection(
  flags: { url?: string; token?: string },
  env: NodeJS.ProcessEnv = process.env,
): Connection & { source: string } {
  const explicitUrl = flags.url || env.EDGECLAW_URL || undefined;
  const explicitToken =
    flags.token || env.EDGECLAW_GATEWAY_TOKEN || env.OPENCLAW_GATEWAY_TOKEN || undefined;
  const dataDir = resolve(env.EDGECLAW_DATA_DIR || ".edgeclaw/data");
  const local = explicitUrl ? undefined : readLiveDevState(dataDir);
  const url = explicitUrl ?? local?.url;
  if (!url) {
    throw new CliError(
      `no gateway given and no running \`npm run dev\` found for ${dataDir}: start it, or pass --url (EDGECLAW_URL) for another gateway`,
    );
  }
  let token = explicitToken;
  if (!token && local?.tokenFile) {
    try {
      token = readFileSync(local.tokenFile, "utf8").trim() || undefined;
    } catch {
      // Unreadable: the request goes without a token and the server says 401.
    }
  }
  return { url, token, source: explicitUrl ? "given" : `the local dev stack (${dataDir})` };
}
