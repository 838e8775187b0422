import { existsSync } from "node:fs";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import type { BrowserRunStandin } from "./browser-run-standin.ts";

/**
 * The browser of `npm run dev`: the loopback Browser Run stand-in (browser-run-standin.ts) over
 * this machine's Chromium, started before the Worker builds so its URL can be handed to the local
 * Worker (`--browser-run`), which then serves the browser Worker bound as BROWSER_WORKER. Nothing
 * of Chromium starts until the agent's first browser call: the stand-in only listens.
 *
 * Off (dev starts without the binding, and the banner's line says how to get it) when there is no
 * Chromium, when `browser.enabled` is false, or with EDGECLAW_DEV_BROWSER=0.
 */
export const DEFAULT_CHROMIUM = "/usr/bin/chromium";

export interface DevBrowser {
  /** The stand-in's URL, for `--browser-run`; absent when the browser is off. */
  url?: string;
  /** The banner's line. */
  line: string;
  /** Ends every Chromium it started (synchronously) and closes its listener. */
  stop(): Promise<void>;
}

export async function startDevBrowser(
  config: EdgeclawConfig,
  env: NodeJS.ProcessEnv = process.env,
): Promise<DevBrowser> {
  const off = (why: string): DevBrowser => ({
    line: `  Browser: off (${why})`,
    stop: async () => undefined,
  });
  if (env.EDGECLAW_DEV_BROWSER === "0") return off("EDGECLAW_DEV_BROWSER=0");
  if (!config.browser.enabled) return off("browser.enabled is false");
  const executablePath = env.EDGECLAW_CHROMIUM || DEFAULT_CHROMIUM;
  if (!existsSync(executablePath))
    return off(
      `no Chromium at ${executablePath}: install it (Debian/Ubuntu: sudo apt-get install chromium) or set EDGECLAW_CHROMIUM to its path, then restart`,
    );
  // Loaded only when used: ws and the stand-in stay out of a dev without a browser.
  const { startBrowserRunStandin } = await import("./browser-run-standin.ts");
  const standin: BrowserRunStandin = await startBrowserRunStandin({ executablePath });
  return {
    url: standin.url,
    line: `  Browser: ${executablePath} through the Browser Run stand-in on ${standin.url} (the agent's browser tool)`,
    stop: () => standin.stop(),
  };
}
