import { markdownToStarMarkup } from "../star-markup.ts";

/**
 * Markdown as models write it → WhatsApp's own formatting (*bold*, _italic_, ~strike~, `code`,
 * ```blocks```): the single-star markup (../star-markup.ts), with `[t](u)` → `t (u)`, since
 * WhatsApp has no link markup and links bare URLs itself.
 */
export function markdownToWhatsApp(markdown: string): string {
  return markdownToStarMarkup(markdown, (label, url) => `${label} (${url})`);
}
