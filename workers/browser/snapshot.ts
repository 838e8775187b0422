import type { Page } from "@cloudflare/playwright";
import {
  fenceBlock,
  newFenceId,
  sanitizeLabel,
  sanitizeUntrusted,
} from "../../functions/agent/untrusted-text.ts";

/**
 * The page as the model reads it: Playwright's AI snapshot (an ARIA tree whose elements carry refs,
 * `- button "Sign in" [ref=e7]`; `aria-ref=e7` finds the element again), bounded, inside the
 * untrusted fence, since every word of it comes from the page. `_snapshotForAI` is Playwright's
 * own (private) API, pinned with @cloudflare/playwright's version; test/browser/ exercises it.
 */

/** Roles the model acts on; "efficient" keeps only their lines (and headings, for orientation). */
const INTERACTIVE =
  /^\s*- (button|link|textbox|searchbox|checkbox|radio|combobox|listbox|option|menuitem|menuitemcheckbox|menuitemradio|tab|switch|slider|spinbutton|heading)\b/;

interface SnapshotCapable {
  _snapshotForAI(options?: { timeout?: number }): Promise<{ full: string }>;
}

export async function snapshotText(
  page: Page,
  mode: "efficient" | "full",
  maxChars: number,
  timeoutMs: number,
): Promise<string> {
  const { full } = await (page as unknown as SnapshotCapable)._snapshotForAI({
    timeout: timeoutMs,
  });
  const lines =
    mode === "efficient" ? full.split("\n").filter((line) => INTERACTIVE.test(line)) : [full];
  return pageBlock(page, lines.join("\n"), maxChars, `snapshot (${mode})`);
}

/** `text` from the page (its title first), cut to `maxChars`, inside one fence: all of it is the page's. */
export async function pageBlock(
  page: Page,
  text: string,
  maxChars: number,
  what: string,
): Promise<string> {
  const title = await page.title().catch(() => "");
  const cut =
    text.length > maxChars
      ? `${text.slice(0, maxChars)}\n[cut: ${text.length} chars, showing the first ${maxChars}]`
      : text;
  const url = sanitizeLabel(page.url(), 300);
  const inner = sanitizeUntrusted(`${title ? `Title: ${title.slice(0, 300)}\n\n` : ""}${cut}`);
  return `${what} of ${url}\n${fenceBlock(inner, `browser ${what} of ${url}`, newFenceId())}`;
}
