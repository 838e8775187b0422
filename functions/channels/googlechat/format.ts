import { markdownToStarMarkup } from "../star-markup.ts";

/**
 * Markdown as models write it → Google Chat's text formatting
 * (developers.google.com/workspace/chat/format-messages): the single-star markup
 * (../star-markup.ts), with `[t](u)` → `<u|t>`.
 */
export function markdownToGoogleChat(markdown: string): string {
  return markdownToStarMarkup(markdown, (label, url) => `<${url}|${label.replace(/[|>]/g, " ")}>`);
}
