import { markdownToStarMarkup } from "../star-markup.ts";

/**
 * Markdown as models write it → WhatsApp's formatting (WhatsApp FAQ "How to format your
 * messages"): the single-star markup (../star-markup.ts) Google Chat shares, with `[t](u)` →
 * `t (u)`, since WhatsApp has no link markup.
 */
export function markdownToWhatsApp(markdown: string): string {
  return markdownToStarMarkup(markdown, (label, url) => `${label} (${url})`);
}
