/**
 * The control page's device links (a WhatsApp account linked as a device): under each companion
 * deployment in the Channels view, a connector that reports a `link` (GET /admin/companion/status)
 * shows its state, the QR code to scan — drawn as SVG from the module rows the companion encoded —
 * or the pairing code, and why it stopped. While a code is waiting the view reloads every 5 s, so
 * the next QR code (every 20 s) replaces the expired one.
 */
export const CONTROL_LINKS_SCRIPT = String.raw`
var linkRefresh = null;

function linkParts(connectors) {
  var links = (connectors || []).filter(function (k) { return k.link; });
  if (!links.length) return null;
  var waiting = links.some(function (k) { return /^awaiting-/.test(k.link.state); });
  clearTimeout(linkRefresh);
  if (waiting) linkRefresh = setTimeout(function () { if (current && current.view.id === "channels") rerender(); }, 5000);
  return links.map(function (k) {
    var l = k.link;
    var name = k.channel + (k.accountId !== "default" ? " (" + k.accountId + ")" : "");
    return h("div", { cls: "card", "data-link": k.channel + ":" + k.accountId },
      h("div", { cls: "row" }, h("b", { text: name + " link" }), h("span", { cls: "badge " + (l.state === "linked" ? "ok" : /^awaiting-|reconnecting|connecting|unlinked/.test(l.state) ? "warn" : "err"), "data-field": "link-state", text: l.state })),
      l.state === "awaiting-qr" && l.qrModules ? [h("p", { cls: "muted", text: "Scan in WhatsApp → Settings → Linked devices → Link a device. A new code replaces this one" + (l.expiresAt ? " at " + new Date(l.expiresAt).toLocaleTimeString() : "") + "." }), qrSvg(l.qrModules)] : null,
      l.pairingCode ? [h("p", { cls: "muted", text: "In WhatsApp → Linked devices → Link a device → Link with phone number instead, enter:" }), h("pre", { "data-field": "pairing-code", text: l.pairingCode.slice(0, 4) + "-" + l.pairingCode.slice(4) })] : null,
      l.me ? h("div", { cls: "muted", text: "Linked as " + l.me }) : null,
      l.retryAt ? h("div", { cls: "muted", text: "Next attempt " + when(l.retryAt) }) : null,
      l.reason ? h("div", { cls: l.state === "logged-out" || l.state === "replaced" ? "err" : "warn", text: l.reason + (l.state === "logged-out" ? " — restart the companion to link again." : "") }) : null);
  });
}

/** The QR code as one SVG path, a dark square per 1 in the rows, on white (scanners need the contrast). */
function qrSvg(rows) {
  var ns = "http://www.w3.org/2000/svg", size = rows.length, d = "";
  rows.forEach(function (row, y) { for (var x = 0; x < row.length; x++) if (row.charAt(x) === "1") d += "M" + x + " " + y + "h1v1h-1z"; });
  var svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 " + size + " " + size);
  svg.setAttribute("width", "264"); svg.setAttribute("height", "264");
  svg.setAttribute("shape-rendering", "crispEdges");
  svg.setAttribute("data-field", "link-qr");
  svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "QR code to link the device");
  var background = document.createElementNS(ns, "rect");
  background.setAttribute("width", String(size)); background.setAttribute("height", String(size)); background.setAttribute("fill", "#fff");
  var path = document.createElementNS(ns, "path");
  path.setAttribute("d", d); path.setAttribute("fill", "#000");
  svg.appendChild(background); svg.appendChild(path);
  return svg;
}
`;
