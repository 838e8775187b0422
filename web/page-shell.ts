import { THEME_CSS } from "./theme-css.ts";

/**
 * The HTML every operator page (web chat, control page) is built from, so both carry the same head
 * (charset, viewport, no referrer, no favicon request) and the same theme, and their one style block
 * and one script both carry the nonce placeholder the Worker fills in per response and names in the
 * Content-Security-Policy (workers/html-page.ts). A page brings only its title, its own CSS rules,
 * its body markup and its script. The shell is markup only: web/ imports nothing from the Worker.
 */

/** Replaced by the Worker with a fresh nonce on every response. */
export const NONCE_PLACEHOLDER = "__NONCE__";

export interface OperatorPage {
  title: string;
  /** The page's own rules, after the shared theme. */
  css: string;
  body: string;
  /** Runs once, at the end of the body. */
  script: string;
}

export function operatorPageHtml(page: OperatorPage): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${page.title}</title>
<link rel="icon" href="data:,">
<style nonce="${NONCE_PLACEHOLDER}">
${THEME_CSS}
${page.css}
  [hidden] { display: none !important; }
</style>
</head>
<body>
${page.body}
<script nonce="${NONCE_PLACEHOLDER}">
${page.script}
</script>
</body>
</html>
`;
}
