/** Shared bits of the generated reference pages. */

export const GENERATED_NOTE =
  "Generated from the code by `npm run docs:gen` (scripts/docs/); do not edit by hand — `npm test` fails when this page is stale.";

/** Text safe inside one Markdown table cell. */
export function tableCell(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .replace(/(?<!\\)\|/g, "\\|")
    .trim();
}
