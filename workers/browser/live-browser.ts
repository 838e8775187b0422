import {
  type Browser,
  connect,
  launch,
  type Page,
  sessions,
  type WorkersConnectOptions,
  type WorkersLaunchOptions,
} from "@cloudflare/playwright";
import type { BrowserSettings } from "../../functions/agent/browser-wire.ts";
import { browserEndpoint, type BrowserWorkerEnv } from "./endpoint.ts";
import { RequestGuard } from "./request-guard.ts";

/**
 * One session's connected browser: the Browser Run session (launched, or reconnected to by its id
 * after the Durable Object lost its connection), its request guard, and its tabs by CDP target id
 * (which survives a reconnect, where Playwright's page objects do not). Console messages are kept
 * per tab, bounded, from the time of connecting.
 */

const CONSOLE_KEPT = 100;

export interface ConsoleEntry {
  level: string;
  text: string;
}

export class LiveBrowser {
  private readonly ids = new WeakMap<Page, string>();
  private readonly watched = new WeakSet<Page>();
  readonly console = new Map<string, ConsoleEntry[]>();

  private constructor(
    readonly browser: Browser,
    readonly sessionId: string,
    readonly guard: RequestGuard,
    /** Set when an earlier session had ended and this one replaced it (its tabs are gone). */
    readonly replaced: boolean,
  ) {}

  /** Reconnects to `sessionId` when given and still alive, else launches a new session. */
  static async open(
    env: BrowserWorkerEnv,
    settings: BrowserSettings,
    sessionId: string | undefined,
  ): Promise<LiveBrowser> {
    const endpoint = browserEndpoint(env);
    let browser: Browser | undefined;
    // `persistent`: Playwright then adopts the browser's default context and the tabs in it, so a
    // reconnect finds the tabs an earlier connection opened (without it, tabs of a context this
    // connection did not create are ignored). @cloudflare/playwright passes it through (its own
    // connectOverCDP sets it always); its types do not list it.
    // A session the platform no longer lists is not connected to: a connection to an ended
    // session can open and then die under the first call, before its loss is seen.
    if (sessionId && !(await hostedSessionEnded(env, sessionId)))
      browser = await connect(endpoint, {
        sessionId,
        persistent: true,
      } as WorkersConnectOptions).catch(() => undefined);
    const replaced = Boolean(sessionId && !browser);
    browser ??= await launch(endpoint, {
      keep_alive: settings.keepAliveMs,
      persistent: true,
    } as WorkersLaunchOptions);
    const guard = new RequestGuard(settings.ssrfPolicy, settings.dnsResolverUrl);
    try {
      await guard.attach(browser);
    } catch (error) {
      // Unguarded is never used: without interception the browser is closed again.
      await browser.close().catch(() => undefined);
      throw error;
    }
    const live = new LiveBrowser(browser, browser.sessionId(), guard, replaced);
    for (const context of browser.contexts()) context.on("page", (page) => live.watch(page));
    for (const page of live.pages()) live.watch(page);
    return live;
  }

  get connected(): boolean {
    return this.browser.isConnected();
  }

  /** Whether Browser Run has ended this session (see hostedSessionEnded below). */
  hostedSessionEnded(env: BrowserWorkerEnv): Promise<boolean> {
    return hostedSessionEnded(env, this.sessionId);
  }

  pages(): Page[] {
    return this.browser.contexts().flatMap((context) => context.pages());
  }

  /** The page's CDP target id: the tab's name for the model, stable across reconnects. */
  async idOf(page: Page): Promise<string> {
    const known = this.ids.get(page);
    if (known) return known;
    const cdp = await page.context().newCDPSession(page);
    try {
      const { targetInfo } = (await cdp.send("Target.getTargetInfo")) as {
        targetInfo: { targetId: string };
      };
      const id = targetInfo.targetId.slice(0, 12);
      this.ids.set(page, id);
      return id;
    } finally {
      await cdp.detach().catch(() => undefined);
    }
  }

  async find(targetId: string): Promise<Page | undefined> {
    for (const page of this.pages()) if ((await this.idOf(page)) === targetId) return page;
    return undefined;
  }

  /**
   * Waits until Playwright knows every tab Chromium has: a click on a target=_blank link has
   * created the tab in Chromium before Playwright hears of it. Chromium's own list says how many
   * to wait for, so nothing is waited for when no tab appeared.
   */
  async settleTabs(timeoutMs: number): Promise<void> {
    const cdp = this.guard.cdp;
    const context = this.browser.contexts()[0];
    if (!cdp || !context) return;
    const { targetInfos } = (await cdp.send("Target.getTargets")) as {
      targetInfos: Array<{ type: string; attached: boolean }>;
    };
    // Attached: the tabs Playwright auto-attaches to (a browser's own first blank tab is not).
    const expected = targetInfos.filter(
      (target) => target.type === "page" && target.attached,
    ).length;
    const deadline = Date.now() + timeoutMs;
    while (this.pages().length < expected && Date.now() < deadline)
      await context.waitForEvent("page", { timeout: deadline - Date.now() }).catch(() => undefined);
  }

  async newPage(): Promise<Page> {
    const context = this.browser.contexts()[0] ?? (await this.browser.newContext());
    const page = await context.newPage();
    this.watch(page);
    return page;
  }

  private watch(page: Page): void {
    if (this.watched.has(page)) return;
    this.watched.add(page);
    page.on("console", (message) => {
      void this.idOf(page).then((id) => {
        const entries = this.console.get(id) ?? [];
        entries.push({ level: message.type(), text: message.text().slice(0, 2000) });
        if (entries.length > CONSOLE_KEPT) entries.shift();
        this.console.set(id, entries);
      });
    });
  }

  /** Ends the hosted browser (Browser.close through the browser-level session), not just this connection. */
  async end(): Promise<void> {
    await this.guard.cdp?.send("Browser.close").catch(() => undefined);
    await this.browser.close().catch(() => undefined);
  }
}

/**
 * Whether Browser Run no longer lists `sessionId` as active (`/v1/sessions`): the platform's own
 * answer, where a socket's close event may come late or, through workerd, not at all. An
 * unanswered question counts as still running.
 */
async function hostedSessionEnded(env: BrowserWorkerEnv, sessionId: string): Promise<boolean> {
  const active = await sessions(browserEndpoint(env)).catch(() => undefined);
  return active !== undefined && !active.some((session) => session.sessionId === sessionId);
}

/** Ends a hosted browser nobody is connected to (the idle alarm of a fresh instance); gone already is fine. */
export async function endHostedSession(env: BrowserWorkerEnv, sessionId: string): Promise<void> {
  const browser = await connect(browserEndpoint(env), {
    sessionId,
    persistent: true,
  } as WorkersConnectOptions).catch(() => undefined);
  if (!browser) return;
  const cdp = await browser.newBrowserCDPSession().catch(() => undefined);
  await cdp?.send("Browser.close").catch(() => undefined);
  await browser.close().catch(() => undefined);
}
