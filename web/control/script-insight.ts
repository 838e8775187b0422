/**
 * The control page's views of money and setup: spend per agent / channel / day (stacked bar charts
 * drawn as inline SVG, no chart library), budgets (use against cap, raise cap, reset period), channel
 * status (webhook URL to paste, last event, last failure, companion status when /admin/companion/status reports one)
 * and the config check.
 */
export const CONTROL_INSIGHT_SCRIPT = String.raw`
var PALETTE = ["#2f6fed", "#e07b39", "#2a9d8f", "#c05299", "#8a6d3b", "#6c5ce7", "#d64545", "#3d9a50"];
var SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs) {
  var el = document.createElementNS(SVG_NS, tag);
  for (var key in attrs) el.setAttribute(key, String(attrs[key]));
  for (var i = 2; i < arguments.length; i++) if (arguments[i]) el.appendChild(typeof arguments[i] === "string" ? document.createTextNode(arguments[i]) : arguments[i]);
  return el;
}

/** One stacked bar per day, one colour per series (agent or channel); the y axis in USD. */
function stackedBars(title, days, series) {
  // Drawn at the width it will be shown (a phone too), so labels keep their size.
  var width = Math.min(900, Math.max(300, window.innerWidth - 70)), height = 240, left = 52, bottom = 22, top = 8;
  var totals = days.map(function (_, i) { return series.reduce(function (sum, s) { return sum + s.values[i]; }, 0); });
  var max = Math.max.apply(null, totals.concat([0])) || 1;
  var plotH = height - bottom - top, step = (width - left) / Math.max(days.length, 1), barW = Math.max(2, step * 0.7);
  var chart = svg("svg", { viewBox: "0 0 " + width + " " + height, role: "img", "aria-label": title });
  chart.setAttribute("class", "chart");
  [0, 0.5, 1].forEach(function (f) {
    var y = top + plotH * (1 - f);
    chart.appendChild(svg("line", { x1: left, x2: width, y1: y, y2: y, stroke: "currentColor", "stroke-opacity": 0.15 }));
    chart.appendChild(svg("text", { x: left - 4, y: y + 4, "text-anchor": "end" }, usd(max * f)));
  });
  days.forEach(function (day, i) {
    var x = left + i * step + (step - barW) / 2, y = top + plotH;
    series.forEach(function (s, n) {
      var v = s.values[i];
      if (!v) return;
      var barH = (v / max) * plotH;
      y -= barH;
      chart.appendChild(svg("rect", { x: x, y: y, width: barW, height: Math.max(barH, 0.5), fill: PALETTE[n % PALETTE.length] },
        svg("title", {}, s.name + " " + day + ": " + usd(v))));
    });
    if (i % Math.ceil(36 / step) === 0) chart.appendChild(svg("text", { x: x + barW / 2, y: height - 6, "text-anchor": "middle" }, day.slice(5)));
  });
  var legend = h("div", { cls: "legend" }, series.map(function (s, n) {
    var swatch = h("i");
    swatch.style.background = PALETTE[n % PALETTE.length];
    return h("span", null, swatch, s.name + " " + usd(s.values.reduce(function (a, b) { return a + b; }, 0)));
  }));
  return h("div", { cls: "card", "data-chart": title }, h("h3", { text: title }), chart, legend);
}

function seriesBy(rows, days, key) {
  var names = [];
  rows.forEach(function (r) { if (names.indexOf(r[key]) < 0) names.push(r[key]); });
  return names.map(function (name) {
    return { name: name, values: days.map(function (day) {
      return rows.filter(function (r) { return r.day === day && r[key] === name; }).reduce(function (sum, r) { return sum + r.usd; }, 0);
    }) };
  });
}

function lastDays(n) {
  var out = [];
  for (var i = n - 1; i >= 0; i--) out.push(new Date(Date.now() - i * 86400000).toISOString().slice(0, 10));
  return out;
}

view("spend", "Spend", function () {
  var days = Number(sessionStorage.getItem("edgeclaw.control.days") || 14);
  var picker = h("select", { "aria-label": "Period" }, [7, 14, 30, 90].map(function (n) { return h("option", { value: n, selected: n === days, text: "last " + n + " days" }); }));
  picker.addEventListener("change", function () { sessionStorage.setItem("edgeclaw.control.days", picker.value); rerender(); });
  return api("GET", "/admin/spend?days=" + days).then(function (data) {
    var axis = lastDays(days);
    data.rows.forEach(function (r) { if (axis.indexOf(r.day) < 0) axis.push(r.day); });
    axis.sort();
    var total = data.rows.reduce(function (sum, r) { return sum + r.usd; }, 0);
    var calls = data.rows.reduce(function (sum, r) { return sum + r.calls; }, 0);
    return [
      h("h2", { text: "Spend" }),
      h("div", { cls: "card row" }, h("div", { cls: "grow" }, h("b", { text: usd(total) }), " over ", count(calls), " model calls (days in " + data.timeZone + ")"), picker),
      data.rows.length ? [stackedBars("Spend per day by agent", axis, seriesBy(data.rows, axis, "agentId")), stackedBars("Spend per day by channel", axis, seriesBy(data.rows, axis, "channel"))]
        : h("div", { cls: "card" }, empty("No metered model calls in this period.")),
    ];
  });
});

view("budgets", "Budgets", function () {
  return api("GET", "/admin/budgets").then(function (data) {
    var cards = data.scopes.map(function (scope) {
      return h("div", { cls: "card", "data-scope": scope.scope }, h("h3", { text: scope.scope }), scope.windows.map(function (w) { return budgetWindow(scope.scope, w); }));
    });
    return [h("h2", { text: "Budgets" }), h("p", { cls: "muted", text: "Caps from the config's budgets (periods in " + data.timeZone + "). A raise holds until the period ends." }),
      cards.length ? cards : h("div", { cls: "card" }, empty("No budget caps are configured (config key budgets)."))];
  });
});

function budgetWindow(scope, w) {
  var lines = [];
  if (w.limitUsd !== undefined) lines.push(meter(usd(w.spentUsd) + " of " + usd(w.limitUsd), w.spentUsd / w.limitUsd));
  if (w.limitTokens !== undefined) lines.push(meter(count(w.spentTokens) + " of " + count(w.limitTokens) + " tokens", w.spentTokens / w.limitTokens));
  var amount = h("input", { type: "number", min: "0", step: "any", placeholder: "new USD cap", "aria-label": "New USD cap for " + w.period, cls: "grow" });
  var raise = h("button", { "data-action": "raise", text: "Raise cap" });
  var reset = h("button", { cls: "danger", "data-action": "reset-period", text: "Reset period" });
  var path = "/admin/budgets/" + encodeURIComponent(scope);
  raise.addEventListener("click", function () {
    var value = Number(amount.value);
    if (!(value > 0)) { toast("Enter a USD amount above 0", true); return; }
    act(raise, function () { return api("POST", path + "/raise", { period: w.period, usd: value }); }, function () { return "Raised the " + w.period + " cap of " + scope + " to " + usd(value); });
  });
  reset.addEventListener("click", function () {
    if (!confirm("Reset this " + w.period + "'s count for " + scope + "?")) return;
    act(reset, function () { return api("POST", path + "/reset", { period: w.period }); }, function () { return "Reset the " + w.period + " of " + scope; });
  });
  return h("div", { "data-period": w.period },
    h("div", { cls: "row" }, h("b", { text: w.key }), w.raised ? h("span", { cls: "badge warn", text: "raised" }) : null, h("span", { cls: "muted", text: "resets " + when(w.resetsAt) })),
    lines, h("div", { cls: "row" }, amount, raise, reset));
}

function meter(label, fraction) {
  var bar = h("div", { cls: fraction >= 1 ? "hot" : "" });
  bar.style.width = Math.min(100, Math.max(0, fraction * 100)).toFixed(1) + "%";
  return h("div", null, h("div", { cls: "muted", text: label }), h("div", { cls: "meter" }, bar));
}

view("channels", "Channels", function () {
  // The companion's detail is behind the gateway token (the unauthenticated /health is liveness only).
  var status = api("GET", "/admin/companion/status").catch(function () { return null; });
  return Promise.all([api("GET", "/admin/channels/status"), status]).then(function (results) {
    var rows = results[0].channels, companion = results[1] && results[1].companion;
    var deployments = companion ? (companion.deployments || [companion]) : [];
    // A companion channel's last event is the connector's report (no webhook reaches the index first).
    deployments.forEach(function (d) {
      (d.connectors || []).forEach(function (k) {
        rows.forEach(function (c) {
          if (c.channel === k.channel && c.accountId === k.accountId && k.lastEventAt && (!c.lastEventAt || k.lastEventAt > Date.parse(c.lastEventAt))) c.lastEventAt = new Date(k.lastEventAt).toISOString();
        });
      });
    });
    return [h("h2", { text: "Channels" }), rows.length ? rows.map(function (c) {
      var url = c.webhookUrl;
      var copy = url ? h("button", { text: "Copy" }) : null;
      if (copy) copy.addEventListener("click", function () { navigator.clipboard.writeText(url).then(function () { toast("Copied"); }, function () { toast("Copy failed: select the URL", true); }); });
      var refused = Object.keys(c.refused).map(function (k) { return k + " " + c.refused[k]; }).join(", ");
      return h("div", { cls: "card", "data-channel": c.channel + ":" + c.accountId },
        h("div", { cls: "row" }, h("b", { text: c.label }), h("span", { cls: "muted", text: "account " + c.accountId })),
        url ? h("div", { cls: "row" }, urlCode(url, { cls: "grow", "data-field": "webhook-url" }), copy) : h("div", { cls: "muted", text: "No webhook here (disabled, or served by the companion)." }),
        h("div", null, "Last event: ", h("span", { "data-field": "last-event", text: c.lastEventAt ? when(c.lastEventAt) : c.accepted ? "accepted, not yet in the session index" : "none yet" }), " · accepted ", count(c.accepted), refused ? " · refused " + refused : ""),
        c.lastError ? h("div", { cls: "err", text: "Last failure " + when(c.lastError.at) + ": " + c.lastError.reason }) : h("div", { cls: "muted", text: "No failures recorded." }));
    }) : h("div", { cls: "card" }, empty("No channels are configured.")),
    deployments.length ? h("div", { cls: "card", "data-field": "companion" }, h("h3", { text: "Companion" }), deployments.map(companionPart)) : null];
  });
});

/** One companion deployment from /admin/companion/status: its lease and container as pairs, its connectors as a table. */
function companionPart(d) {
  var container = d.container || {};
  var stop = container.lastStop;
  return h("div", { "data-deployment": d.deployment },
    pairs([
      ["Deployment", d.deployment],
      ["Instance", d.instance || null],
      ["Lease", d.instance ? (d.leaseHeld ? "held" : "not held") + " (epoch " + d.leaseEpoch + ")" : null],
      ["Reported", d.reportedAt ? when(d.reportedAt) : null],
      ["Note", d.note],
      ["Error", d.error ? h("span", { cls: "err", text: d.error }) : null],
      ["Container", container.state],
      ["Last stop", stop ? when(stop.at) + " · exit " + stop.exitCode + " · " + stop.reason : null],
      ["Container error", container.lastError ? h("span", { cls: "err", text: container.lastError }) : null],
      ["Missing secrets", container.missingSecrets && container.missingSecrets.length ? h("span", { cls: "err", text: container.missingSecrets.join(", ") }) : null],
    ]),
    d.connectors && d.connectors.length ? table([
      { label: "Channel", cell: function (k) { return k.channel + (k.accountId !== "default" ? " (" + k.accountId + ")" : ""); } },
      { label: "State", cell: function (k) { return h("span", { cls: k.state === "connected" || k.state === "ready" ? "ok" : "warn", text: k.state }); } },
      { label: "Last event", cell: function (k) { return k.lastEventAt ? when(k.lastEventAt) : "none yet"; } },
      { label: "Last error", cell: function (k) { return k.lastError ? h("span", { cls: "err", text: k.lastError }) : "—"; } },
    ], d.connectors) : null,
    linkParts(d.connectors));
}

view("config", "Config", function () {
  return api("GET", "/admin/config/report").then(function (r) {
    return [h("h2", { text: "Config check" }),
      h("div", { cls: "card" }, h("b", { cls: r.ok ? "ok" : "err", "data-field": "config-ok", text: r.ok ? "Config OK" : "Config has errors" }),
        r.errors.map(function (e) { return h("div", { cls: "err", text: e }); }),
        r.warnings.map(function (w) { return h("div", { cls: "warn", text: "warning: " + w }); })),
      h("h3", { text: "Secrets" }),
      h("div", { cls: "card" }, r.secrets.length ? table([
        { label: "Secret", cell: function (s) { return h("code", { text: s.name }); } },
        { label: "Why", cell: function (s) { return s.why; } },
        { label: "Set", cell: function (s) { return h("span", { cls: s.present ? "ok" : "err", text: s.present ? "set" : "missing" }); } },
      ], r.secrets) : empty("The config names no secrets.")),
      h("h3", { text: "Channels" }),
      h("div", { cls: "card" }, r.channels.length ? table([
        { label: "Channel", cell: function (c) { return c.channel + (c.accountId !== "default" ? " (" + c.accountId + ")" : ""); } },
        { label: "Enabled", cell: function (c) { return h("span", { cls: c.enabled ? "ok" : "muted", text: c.enabled ? "yes" : "no" }); } },
        { label: "DMs / groups", cell: function (c) { return c.dmPolicy + " / " + c.groupPolicy; } },
        { label: "Webhook path", cell: function (c) { return c.webhookPath ? h("code", { text: c.webhookPath }) : "—"; } },
        { label: "Missing", cell: function (c) { return c.missing && c.missing.length ? h("span", { cls: "err", "data-field": "channel-missing", text: c.missing.join(", ") }) : h("span", { cls: "ok", text: c.enabled ? "nothing" : "—" }); } },
      ], r.channels) : empty("No channels are configured."))];
  });
});
`;
