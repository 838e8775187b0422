import { operatorPageHtml } from "../page-shell.ts";
import { CONTROL_CORE_SCRIPT } from "./script-core.ts";
import { CONTROL_OPERATIONS_SCRIPT } from "./script-operations.ts";
import { CONTROL_INSIGHT_SCRIPT } from "./script-insight.ts";
import { CONTROL_LINKS_SCRIPT } from "./script-links.ts";
import { CONTROL_SANDBOX_SCRIPT } from "./script-sandbox.ts";
import { CONTROL_ENVIRONMENTS_SCRIPT } from "./script-environments.ts";
import { CONTROL_AUTH_PROFILES_SCRIPT } from "./script-auth-profiles.ts";

/**
 * The control page (`/control`): one dependency-free page over the token-protected admin API. The
 * gateway token is typed once and kept in sessionStorage (gone when the tab closes, never in a URL);
 * every view is a fetch to /admin/… with it. The head, theme and nonces come from page-shell.ts. The
 * scripts are plain ES2017 written without template literals, so they live in String.raw blocks.
 */
export const CONTROL_PAGE_HTML = operatorPageHtml({
  title: "edgeclaw control",
  css: String.raw`  header { display: flex; gap: .5rem; align-items: center; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--card); position: sticky; top: 0; z-index: 1; }
  header h1 { font-size: 1rem; margin: 0; flex-shrink: 0; }
  nav { display: flex; gap: .25rem; overflow-x: auto; flex: 1; scrollbar-width: none; }
  nav a { color: var(--muted); text-decoration: none; padding: .25rem .55rem; border-radius: 6px; white-space: nowrap; font-size: .92rem; }
  nav a.on { color: var(--fg); background: var(--bg); border: 1px solid var(--line); }
  button, input, select { font: inherit; color: var(--fg); }
  button { padding: .3rem .7rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); cursor: pointer; white-space: nowrap; }
  button.primary { background: var(--me); color: #fff; border: none; }
  button.danger { color: var(--err); border-color: var(--err); background: transparent; }
  button:disabled { opacity: .5; cursor: default; }
  input, select { padding: .35rem .55rem; border: 1px solid var(--line); border-radius: 6px; background: var(--card); min-width: 0; }
  main { padding: 1rem; max-width: 72rem; margin: 0 auto; }
  h2 { font-size: 1.1rem; margin: .2rem 0 .8rem; }
  h3 { font-size: .98rem; margin: 1rem 0 .5rem; }
  .card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: .8rem 1rem; margin-bottom: .8rem; overflow-wrap: anywhere; }
  .row { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
  .row .grow { flex: 1; }
  .muted { color: var(--muted); font-size: .88rem; }
  .err { color: var(--err); }
  .warn { color: var(--warn); }
  .ok { color: var(--ok); }
  .badge { display: inline-block; padding: 0 .45rem; border-radius: 999px; border: 1px solid currentColor; font-size: .8rem; }
  pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0; padding: .5rem .6rem; background: var(--bg); border-radius: 6px; font-size: .86rem; }
  code { font-size: .86rem; overflow-wrap: anywhere; }
  /* A URL breaks after a separator (the <wbr>s urlCode puts there), mid-word only if one part is wider than the line. */
  code.url { overflow-wrap: break-word; word-break: normal; }
  .kv { display: grid; grid-template-columns: max-content 1fr; gap: .15rem .8rem; margin: .3rem 0 .6rem; font-size: .9rem; }
  .kv dt { color: var(--muted); }
  .kv dd { margin: 0; overflow-wrap: anywhere; }
  table { width: 100%; border-collapse: collapse; font-size: .92rem; }
  th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
  th { color: var(--muted); font-weight: 500; }
  tr.link { cursor: pointer; }
  tr.link:hover td { background: var(--bg); }
  /* A phone (390 px): each table row becomes a small card, each cell a labelled line. */
  @media (max-width: 640px) {
    header { flex-wrap: wrap; padding: .5rem .6rem; }
    /* Every tab on screen: the tabs wrap onto a second line instead of a hidden sideways scroll. */
    nav { order: 3; flex-basis: 100%; flex-wrap: wrap; overflow: visible; }
    main { padding: .6rem; }
    table, tbody, tr, td { display: block; width: 100%; }
    thead { display: none; }
    tr { border: 1px solid var(--line); border-radius: 8px; margin-bottom: .5rem; padding: .3rem .2rem; background: var(--card); }
    td { border: 0; padding: .15rem .5rem; }
    td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  }
  .msg { padding: .45rem .7rem; border-radius: 8px; margin: .35rem 0; white-space: pre-wrap; overflow-wrap: anywhere; border: 1px solid var(--line); }
  .msg.user { background: var(--bg); }
  .msg .who { color: var(--muted); font-size: .8rem; display: block; }
  .meter { height: .55rem; background: var(--bg); border: 1px solid var(--line); border-radius: 999px; overflow: hidden; margin: .25rem 0; }
  .meter div { height: 100%; background: var(--me); }
  .meter div.hot { background: var(--err); }
  svg.chart { width: 100%; height: auto; display: block; }
  svg.chart text { fill: var(--muted); font-size: 11px; }
  .legend { display: flex; flex-wrap: wrap; gap: .3rem .9rem; font-size: .85rem; margin: .3rem 0; }
  .legend i { display: inline-block; width: .7rem; height: .7rem; border-radius: 2px; margin-right: .3rem; vertical-align: -1px; }
  #toast { position: fixed; left: 50%; bottom: 1rem; transform: translateX(-50%); background: var(--fg); color: var(--bg); padding: .45rem .9rem; border-radius: 8px; max-width: 90vw; }
  #login { display: flex; flex-direction: column; align-items: center; gap: .6rem; margin-top: 18vh; padding: 0 1rem; }
  #login input { width: min(26rem, 90vw); }`,
  body: String.raw`<header>
  <h1>edgeclaw control</h1>
  <nav id="nav" hidden></nav>
  <button id="logout" type="button" hidden>Sign out</button>
</header>
<form id="login" hidden>
  <label for="token-input">Gateway token</label>
  <input id="token-input" type="password" autocomplete="current-password" placeholder="the gateway token (EDGECLAW_GATEWAY_TOKEN)" required>
  <button class="primary" type="submit">Sign in</button>
  <div id="login-error" class="err"></div>
</form>
<main id="view" hidden></main>
<div id="toast" role="status" hidden></div>`,
  script: String.raw`(function () {
"use strict";
${CONTROL_CORE_SCRIPT}
${CONTROL_OPERATIONS_SCRIPT}
${CONTROL_INSIGHT_SCRIPT}
${CONTROL_LINKS_SCRIPT}
${CONTROL_AUTH_PROFILES_SCRIPT}
${CONTROL_SANDBOX_SCRIPT}
${CONTROL_ENVIRONMENTS_SCRIPT}
start();
})();`,
});
