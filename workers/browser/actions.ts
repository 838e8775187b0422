import type { Page } from "@cloudflare/playwright";
import type { BrowserArgs, BrowserSettings } from "../../functions/agent/browser-wire.ts";
import {
  fenceBlock,
  newFenceId,
  sanitizeLabel,
  sanitizeUntrusted,
} from "../../functions/agent/untrusted-text.ts";
import type { LiveBrowser } from "./live-browser.ts";
import { pageBlock, snapshotText } from "./snapshot.ts";

/**
 * OpenClaw's browser actions over one connected browser. Each returns text for the model (page
 * content fenced) and, for a screenshot, the image's bytes for the caller to store. A refusal or a
 * bad ref is an error the model can act on ("take a new snapshot"), never a silent success.
 */

export class BrowserActionError extends Error {}

export interface ActionOutcome {
  text: string;
  image?: { bytes: Uint8Array; mimeType: string };
  /** The tab now current, when the action changed it. */
  current?: string | null;
}

export interface ActionInput {
  live: LiveBrowser;
  args: BrowserArgs;
  settings: BrowserSettings;
  current: string | undefined;
}

function refOf(raw: string): string {
  return /^\d+$/.test(raw) ? `e${raw}` : raw;
}

async function pageFor(input: ActionInput): Promise<{ page: Page; id: string }> {
  // A position in the `tabs` list (1, 2, …) names a tab too, as OpenClaw's `tab select 2` does.
  const position =
    input.args.targetId && /^\d{1,2}$/.test(input.args.targetId) ? Number(input.args.targetId) : 0;
  const atPosition = position ? input.live.pages()[position - 1] : undefined;
  if (atPosition) return { page: atPosition, id: await input.live.idOf(atPosition) };
  const wanted = input.args.targetId ?? input.current;
  if (wanted) {
    const page = await input.live.find(wanted);
    if (page) return { page, id: wanted };
    if (input.args.targetId)
      throw new BrowserActionError(`no tab ${wanted}; list them with action "tabs"`);
  }
  const first = input.live.pages()[0];
  if (!first) throw new BrowserActionError('no tab is open; use action "open" with a url');
  return { page: first, id: await input.live.idOf(first) };
}

/** Navigates, and names the policy's reason when the guard refused the page or a redirect hop. */
async function go(input: ActionInput, page: Page, url: string): Promise<void> {
  const checked = await input.live.guard.check(url);
  if (!checked.ok) throw new BrowserActionError(`browser refused ${url}: ${checked.reason}`);
  const before = input.live.guard.refusals.length;
  try {
    await page.goto(checked.url.toString(), {
      timeout: input.settings.actionTimeoutMs,
      waitUntil: "domcontentloaded",
    });
  } catch (error) {
    const refused = input.live.guard.refusals.slice(before).at(0);
    if (refused)
      throw new BrowserActionError(
        `browser refused ${refused.url} (reached from ${url}): ${refused.reason}`,
      );
    throw new BrowserActionError(`navigation to ${url} failed: ${messageOf(error)}`);
  }
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 300);
}

async function tabsText(input: ActionInput, current: string | undefined): Promise<string> {
  const rows: string[] = [];
  for (const page of input.live.pages()) {
    const id = await input.live.idOf(page);
    const title = await page.title().catch(() => "");
    rows.push(
      `${id === current ? "*" : " "} ${id}  ${page.url()}  ${JSON.stringify(title.slice(0, 80))}`,
    );
  }
  const list = rows.length ? sanitizeUntrusted(rows.join("\n")) : "(no tabs)";
  return `tabs (${rows.length}; * = current):\n${fenceBlock(list, "browser tabs", newFenceId())}`;
}

export async function runAction(input: ActionInput): Promise<ActionOutcome> {
  const { args, settings, live } = input;
  const snapshot = (page: Page, mode = args.mode ?? settings.snapshotMode) =>
    snapshotText(page, mode, settings.maxSnapshotChars, settings.actionTimeoutMs);
  switch (args.action) {
    case "tabs":
      return { text: await tabsText(input, input.current) };
    case "open": {
      if (live.pages().length >= settings.maxTabs)
        throw new BrowserActionError(
          `${settings.maxTabs} tabs are open (browser.maxTabs); close one first`,
        );
      const page = await live.newPage();
      const id = await live.idOf(page);
      try {
        await go(input, page, args.url!);
      } catch (error) {
        await page.close().catch(() => undefined);
        throw error;
      }
      return { text: `opened tab ${id}\n${await snapshot(page, "efficient")}`, current: id };
    }
    case "focus": {
      const { page, id } = await pageFor(input);
      await page.bringToFront();
      return { text: `tab ${id} is current\n${await snapshot(page, "efficient")}`, current: id };
    }
    case "close": {
      const { page, id } = await pageFor(input);
      await page.close();
      const next = live.pages()[0];
      const nextId = next ? await live.idOf(next) : null;
      return {
        text: `closed tab ${id}${nextId ? `; tab ${nextId} is current` : ""}`,
        current: nextId,
      };
    }
    case "navigate": {
      const opened = live.pages().length ? undefined : await live.newPage();
      const { page, id } = opened
        ? { page: opened, id: await live.idOf(opened) }
        : await pageFor(input);
      await go(input, page, args.url!);
      return { text: `tab ${id}\n${await snapshot(page, "efficient")}`, current: id };
    }
    case "snapshot": {
      const { page, id } = await pageFor(input);
      return { text: `tab ${id}\n${await snapshot(page)}` };
    }
    case "read": {
      const { page, id } = await pageFor(input);
      // Playwright's rendered text (what a reader sees, hidden parts left out), not the DOM property.
      // biome-ignore lint/performance/useDomNodeTextContent: page.innerText is Playwright's API
      const text = await page.innerText("body", { timeout: settings.actionTimeoutMs });
      return {
        text: `tab ${id}\n${await pageBlock(page, text, settings.maxSnapshotChars, "text")}`,
      };
    }
    case "screenshot": {
      const { page, id } = await pageFor(input);
      const target = args.ref ? page.locator(`aria-ref=${refOf(args.ref)}`) : page;
      const bytes = await target.screenshot({
        type: args.fullPage ? "jpeg" : "png",
        ...(args.fullPage ? { quality: 70, fullPage: true } : {}),
        timeout: settings.actionTimeoutMs,
      });
      const mimeType = args.fullPage ? "image/jpeg" : "image/png";
      return {
        text: `screenshot of tab ${id} (${page.url()})`,
        image: { bytes: new Uint8Array(bytes), mimeType },
      };
    }
    case "console": {
      const { id } = await pageFor(input);
      const entries = (live.console.get(id) ?? []).filter(
        (entry) => !args.level || entry.level === args.level,
      );
      const lines = entries.map((entry) => `[${entry.level}] ${entry.text}`).join("\n");
      return {
        text: `console of tab ${id} (${entries.length} messages since connecting)\n${fenceBlock(sanitizeUntrusted(lines || "(none)"), "browser console", newFenceId())}`,
      };
    }
    case "act":
      return act(input, snapshot);
    default:
      throw new BrowserActionError(`action ${args.action} is handled by the session`);
  }
}

async function act(
  input: ActionInput,
  snapshot: (page: Page, mode?: "efficient" | "full") => Promise<string>,
): Promise<ActionOutcome> {
  const { args, settings } = input;
  const { page, id } = await pageFor(input);
  const timeout = settings.actionTimeoutMs;
  const refusedBefore = input.live.guard.refusals.length;
  const pagesBefore = new Set(input.live.pages());
  const target = () => {
    if (!args.ref) throw new BrowserActionError(`act ${args.kind} needs a ref from a snapshot`);
    return page.locator(`aria-ref=${refOf(args.ref)}`);
  };
  let done: string;
  try {
    switch (args.kind) {
      case "click":
        await target().click({ timeout });
        done = `clicked ${args.ref}`;
        break;
      case "hover":
        await target().hover({ timeout });
        done = `hovered ${args.ref}`;
        break;
      case "type":
        await target().fill(args.text ?? "", { timeout });
        if (args.submit) await target().press("Enter", { timeout });
        done = `typed into ${args.ref}${args.submit ? " and pressed Enter" : ""}`;
        break;
      case "fill":
        for (const field of args.fields ?? [])
          await page.locator(`aria-ref=${refOf(field.ref)}`).fill(field.value, { timeout });
        done = `filled ${(args.fields ?? []).map((field) => field.ref).join(", ") || "nothing"}`;
        break;
      case "select":
        await target().selectOption(args.values ?? [], { timeout });
        done = `selected ${JSON.stringify(args.values ?? [])} in ${args.ref}`;
        break;
      case "press":
        if (args.ref) await target().press(args.key ?? "Enter", { timeout });
        else await page.keyboard.press(args.key ?? "Enter");
        done = `pressed ${args.key ?? "Enter"}`;
        break;
      case "wait":
        if (args.text) await page.getByText(args.text).first().waitFor({ timeout });
        if (args.textGone)
          await page.getByText(args.textGone).first().waitFor({ state: "hidden", timeout });
        if (args.timeMs) await page.waitForTimeout(Math.min(args.timeMs, timeout));
        done = "waited";
        break;
      case "evaluate": {
        if (!settings.evaluateEnabled)
          throw new BrowserActionError("act evaluate is turned off (browser.evaluateEnabled)");
        const value = await page.evaluate(`(${args.fn})()`);
        const shown = JSON.stringify(value ?? null).slice(0, settings.maxSnapshotChars);
        return {
          text: `evaluated in tab ${id}\n${fenceBlock(sanitizeUntrusted(shown), "browser evaluate result", newFenceId())}`,
        };
      }
      default:
        throw new BrowserActionError(`act needs a kind`);
    }
  } catch (error) {
    if (error instanceof BrowserActionError) throw error;
    throw new BrowserActionError(
      `act ${args.kind}${args.ref ? ` on ${args.ref}` : ""} failed: ${messageOf(error)}. Refs change when the page does: take a new snapshot and use its refs`,
    );
  }
  // A click may have navigated: let the next document load before describing it.
  await page.waitForLoadState("domcontentloaded", { timeout }).catch(() => undefined);
  const refused = input.live.guard.refusals.slice(refusedBefore).at(0);
  let note = refused ? `\n(the browser refused ${refused.url}: ${refused.reason})` : "";
  // A link with target=_blank or window.open: say which tab appeared, so the model can focus it.
  await input.live.settleTabs(timeout);
  for (const opened of input.live.pages().filter((candidate) => !pagesBefore.has(candidate))) {
    await opened.waitForLoadState("domcontentloaded", { timeout }).catch(() => undefined);
    note += `\n(a new tab opened: ${await input.live.idOf(opened)} ${sanitizeLabel(opened.url(), 300)}; focus it to work there)`;
  }
  return { text: `${done} in tab ${id}${note}\n${await snapshot(page, "efficient")}` };
}
