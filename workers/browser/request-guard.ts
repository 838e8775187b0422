import type { Browser, CDPSession } from "@cloudflare/playwright";
import { checkFetchTarget, type SsrfPolicy, type UrlCheck } from "../../functions/http/ssrf.ts";

/**
 * The SSRF rules of `web_fetch` (functions/http/ssrf.ts) on everything the browser requests: the
 * model's navigations, every subresource, popups and new tabs, and each redirect hop. Playwright's
 * `route` is not used because it does not see redirect hops (its handler runs for the first URL
 * only), so a public page could redirect the browser inward; Chromium's Fetch domain, enabled on the
 * browser target, pauses every request of every page including each hop, and each is continued
 * only after its URL (and, for a host name, every address it resolves to) passed the policy.
 * Downloads are denied outright (Browser.setDownloadBehavior), so none is ever written.
 *
 * The guard lives as long as the connection: while nobody is connected (between calls, after the
 * Durable Object was evicted) a page's own timers run unguarded until the next call reconnects.
 * WebSockets opened by a page are not paused by the Fetch domain either. In production both leave
 * from Browser Run, outside the operator's networks; docs/concepts/browser.md says so.
 */

/** How long a host's verdict is reused (a page asks for the same hosts over and over). */
const VERDICT_TTL_MS = 60_000;
const MAX_VERDICTS = 500;
const MAX_REFUSALS = 20;
/** Schemes that never touch the network. */
const LOCAL_SCHEMES = new Set(["data:", "blob:", "about:", "chrome-error:"]);

interface RequestPaused {
  requestId: string;
  request: { url: string };
  resourceType?: string;
}

export interface Refusal {
  url: string;
  reason: string;
}

export class RequestGuard {
  private readonly verdicts = new Map<string, { check: UrlCheck; at: number }>();
  /** The latest refused requests, newest last: a navigation that fails says why. */
  readonly refusals: Refusal[] = [];
  private session?: CDPSession;

  constructor(
    private readonly policy: SsrfPolicy,
    private readonly dnsResolverUrl: string,
  ) {}

  async attach(browser: Browser): Promise<void> {
    const session = await browser.newBrowserCDPSession();
    session.on("Fetch.requestPaused", (event: RequestPaused) => {
      void this.decide(session, event);
    });
    await session.send("Fetch.enable", {
      patterns: [{ urlPattern: "*", requestStage: "Request" }],
    });
    await session.send("Browser.setDownloadBehavior", { behavior: "deny" });
    this.session = session;
  }

  /** The browser-level CDP session (Browser.close ends the hosted browser through it). */
  get cdp(): CDPSession | undefined {
    return this.session;
  }

  /** The policy's verdict on `rawUrl`, reused for a minute per origin. */
  async check(rawUrl: string): Promise<UrlCheck> {
    let key: string;
    try {
      const url = new URL(rawUrl);
      key = `${url.protocol}//${url.host}`;
    } catch {
      return { ok: false, reason: "not a valid absolute URL" };
    }
    const now = Date.now();
    const known = this.verdicts.get(key);
    if (known && now - known.at < VERDICT_TTL_MS)
      return known.check.ok ? { ok: true, url: new URL(rawUrl) } : known.check;
    const check = await checkFetchTarget(rawUrl, this.policy, { resolverUrl: this.dnsResolverUrl });
    if (this.verdicts.size >= MAX_VERDICTS) this.verdicts.clear();
    this.verdicts.set(key, { check, at: now });
    return check;
  }

  private async decide(session: CDPSession, event: RequestPaused): Promise<void> {
    const url = event.request.url;
    let verdict: UrlCheck;
    try {
      verdict = LOCAL_SCHEMES.has(new URL(url).protocol)
        ? { ok: true, url: new URL(url) }
        : await this.check(url);
    } catch (error) {
      verdict = { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
    try {
      if (verdict.ok) {
        await session.send("Fetch.continueRequest", { requestId: event.requestId });
        return;
      }
      this.refusals.push({ url, reason: verdict.reason });
      if (this.refusals.length > MAX_REFUSALS) this.refusals.shift();
      await session.send("Fetch.failRequest", {
        requestId: event.requestId,
        errorReason: "BlockedByClient",
      });
    } catch {
      // The request or the page went away meanwhile; nothing is left to decide.
    }
  }
}
