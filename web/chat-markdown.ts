/**
 * The web chat's Markdown renderer, as page script (joined into chat-page.ts's script). It builds
 * the answer as DOM nodes: elements it creates itself (p, h3–h6, ul/ol/li, blockquote, pre/code,
 * strong, em, del, a, hr, br) holding text nodes. Nothing the model wrote is ever parsed as HTML:
 * no innerHTML, no insertAdjacentHTML, no DOMParser, so `<img onerror>` or `<script>` in an answer
 * is shown as the characters it is. A link becomes an <a> only for http:, https: and mailto: (a
 * `javascript:` or `data:` link stays text); an image `![alt](src)` becomes a link to it, never an
 * <img> (nothing is fetched). Re-rendered from the whole text on every streamed delta.
 * Written without template literals or backticks (\x60 in its regexps) so it can live in a
 * String.raw block unchanged.
 */
export const MARKDOWN_SCRIPT = String.raw`
  // \x60 is the backtick (this script lives in a String.raw template literal).
  var MD_INLINE = /(\x60+)([^\x60]|[\s\S]*?[^\x60])\1|\*\*([\s\S]+?)\*\*|(?<!\w)__(?=\S)([\s\S]*?\S)__(?!\w)|\*(?=\S)([\s\S]*?\S)\*|(?<!\w)_(?=\S)([\s\S]*?\S)_(?!\w)|~~([\s\S]+?)~~|(!?)\[([^\]\n]*)\]\(\s*<?([^()\s>]+)>?(?:\s+"[^"\n]*")?\s*\)|<?(https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"])>?/g;
  var MD_LIST = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/;
  var MD_FENCE = /^\s{0,3}(\x60{3,}|~{3,})\s*([\w+.#-]*)\s*$/;
  var MD_HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  var MD_RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
  var MD_QUOTE = /^\s{0,3}>\s?(.*)$/;

  function mdSafeUrl(url) {
    var clean = String(url).replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
    return /^(https?:|mailto:)/i.test(clean) ? clean : null;
  }

  function mdEl(parent, tag) {
    var el = document.createElement(tag);
    parent.appendChild(el);
    return el;
  }

  function mdText(parent, text) { parent.appendChild(document.createTextNode(text)); }

  function mdInline(parent, text, depth) {
    if (depth > 4) { mdText(parent, text); return; }
    var last = 0, match;
    var pattern = new RegExp(MD_INLINE.source, "g");
    while ((match = pattern.exec(text))) {
      if (match.index > last) mdText(parent, text.slice(last, match.index));
      last = pattern.lastIndex;
      if (match[1]) { mdEl(parent, "code").textContent = match[2]; continue; }
      var strong = match[3] || match[4];
      if (strong) { mdInline(mdEl(parent, "strong"), strong, depth + 1); continue; }
      var em = match[5] || match[6];
      if (em) { mdInline(mdEl(parent, "em"), em, depth + 1); continue; }
      if (match[7]) { mdInline(mdEl(parent, "del"), match[7], depth + 1); continue; }
      if (match[10]) {
        var href = mdSafeUrl(match[10]);
        var label = match[9] || match[10];
        if (!href) { mdText(parent, match[8] === "!" ? label : match[9] ? label + " (" + match[10] + ")" : match[0]); continue; }
        var a = mdEl(parent, "a");
        a.href = href; a.rel = "noopener noreferrer nofollow"; a.target = "_blank";
        if (match[8] === "!") a.textContent = "image: " + label; else mdInline(a, label, depth + 1);
        continue;
      }
      var bare = mdEl(parent, "a");
      bare.href = mdSafeUrl(match[11]); bare.rel = "noopener noreferrer nofollow"; bare.target = "_blank";
      bare.textContent = match[11];
    }
    if (last < text.length) mdText(parent, text.slice(last));
  }

  function mdLines(parent, lines) {
    lines.forEach(function (line, index) {
      if (index) mdEl(parent, "br");
      mdInline(parent, line, 0);
    });
  }

  function mdStartsBlock(line) {
    return MD_FENCE.test(line) || MD_HEADING.test(line) || MD_RULE.test(line) || MD_QUOTE.test(line) || MD_LIST.test(line);
  }

  function renderMarkdown(target, source, depth) {
    depth = depth || 0;
    target.textContent = "";
    var lines = String(source).replace(/\r\n?/g, "\n").split("\n");
    var i = 0;
    while (i < lines.length) {
      var line = lines[i], match;
      if (/^\s*$/.test(line)) { i++; continue; }
      if ((match = MD_FENCE.exec(line))) {
        var code = [];
        for (i++; i < lines.length && lines[i].trim() !== match[1]; i++) code.push(lines[i]);
        i++;
        var pre = mdEl(target, "pre");
        var codeEl = mdEl(pre, "code");
        if (match[2]) codeEl.dataset.lang = match[2];
        codeEl.textContent = code.join("\n");
        continue;
      }
      if ((match = MD_HEADING.exec(line))) {
        mdInline(mdEl(target, "h" + Math.min(6, match[1].length + 2)), match[2], 0);
        i++; continue;
      }
      if (MD_RULE.test(line)) { mdEl(target, "hr"); i++; continue; }
      if (MD_QUOTE.test(line) && depth < 4) {
        var quoted = [];
        while (i < lines.length && (match = MD_QUOTE.exec(lines[i]))) { quoted.push(match[1]); i++; }
        renderMarkdown(mdEl(target, "blockquote"), quoted.join("\n"), depth + 1);
        continue;
      }
      if ((match = MD_LIST.exec(line))) {
        var ordered = /\d/.test(match[1]);
        var list = mdEl(target, ordered ? "ol" : "ul");
        if (ordered && parseInt(match[1], 10) !== 1) list.start = parseInt(match[1], 10);
        while (i < lines.length && (match = MD_LIST.exec(lines[i])) && /\d/.test(match[1]) === ordered) {
          var item = [match[2]];
          for (i++; i < lines.length && /^\s{2,}\S/.test(lines[i]) && !MD_LIST.test(lines[i]); i++) item.push(lines[i].trim());
          mdLines(mdEl(list, "li"), item);
        }
        continue;
      }
      var paragraph = [];
      while (i < lines.length && !/^\s*$/.test(lines[i]) && (!paragraph.length || !mdStartsBlock(lines[i]))) {
        paragraph.push(lines[i]); i++;
      }
      mdLines(mdEl(target, "p"), paragraph);
    }
  }
`;

/** Rules for what renderMarkdown builds inside an answer bubble. */
export const MARKDOWN_CSS = String.raw`  .md { white-space: normal; }
  .md > :first-child { margin-top: 0; }
  .md > :last-child { margin-bottom: 0; }
  .md p, .md ul, .md ol, .md pre, .md blockquote, .md h3, .md h4, .md h5, .md h6 { margin: .45rem 0; }
  .md ul, .md ol { padding-left: 1.3rem; }
  .md h3, .md h4, .md h5, .md h6 { font-size: 1rem; }
  .md code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .88em; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; padding: 0 .25em; }
  .md pre { overflow-x: auto; max-width: 100%; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .5rem .6rem; }
  .md pre code { border: 0; padding: 0; background: none; white-space: pre; }
  .md blockquote { border-left: 3px solid var(--line); padding-left: .6rem; color: var(--muted); }
  .md a { color: var(--me); overflow-wrap: anywhere; }`;
