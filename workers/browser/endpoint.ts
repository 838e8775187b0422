import type { BrowserWorker } from "@cloudflare/playwright";

/**
 * Where the browser comes from. Production: the Browser Run binding (`[browser] binding = "BROWSER"`
 * in wrangler.browser.toml). Locally (`npm run dev`, the tests) workerd has no Browser Run, so
 * `EDGECLAW_LOOPBACK_BROWSER_RUN` names a loopback stand-in that speaks the binding's HTTP API
 * (scripts/lib/browser-run-standin.ts: acquire, the DevTools WebSocket, sessions, limits) over
 * Debian's Chromium; this fetcher sends the binding's requests there, so the same
 * @cloudflare/playwright calls (launch, connect, sessions) run in both.
 */
export interface BrowserWorkerEnv {
  BROWSER?: BrowserWorker;
  EDGECLAW_LOOPBACK_BROWSER_RUN?: string;
}

export function browserEndpoint(env: BrowserWorkerEnv): BrowserWorker {
  if (env.BROWSER) return env.BROWSER;
  const base = env.EDGECLAW_LOOPBACK_BROWSER_RUN;
  if (!base)
    throw new Error(
      "no browser: bind Browser Run as BROWSER (wrangler.browser.toml [browser]), or set EDGECLAW_LOOPBACK_BROWSER_RUN locally",
    );
  const origin = new URL(base);
  return {
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => {
      const asked = new URL(input instanceof Request ? input.url : String(input));
      const target = new URL(asked.pathname + asked.search, origin);
      return fetch(target, input instanceof Request ? new Request(target, input) : init);
    }) as typeof fetch,
  };
}
