/**
 * The colours and type the operator pages share (web chat, control page): one place, so the two
 * look like one product. Light and dark follow the system setting.
 */
export const THEME_CSS = String.raw`  :root { color-scheme: light dark; --bg: #f6f7f9; --fg: #1d2330; --muted: #6b7385; --card: #ffffff; --me: #2f6fed; --line: #dde1e8; --warn: #9a5b00; --err: #b3261e; --ok: #1e7a3c; }
  @media (prefers-color-scheme: dark) { :root { --bg: #14171c; --fg: #e6e9ef; --muted: #98a0b0; --card: #1d2129; --me: #3d7bf5; --line: #2c313b; --warn: #e0a54b; --err: #f2867d; --ok: #6fcf8f; } }
  * { box-sizing: border-box; }
  html, body { height: 100%; margin: 0; }
  body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }`;
