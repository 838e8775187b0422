/**
 * The control page's Sandbox view: where each agent's commands run and whether that backend works
 * now (GET /admin/sandbox/status: the companion's reachability and bubblewrap, each container's
 * state, the commands running), and the commands waiting for approval with Approve once / Deny
 * (GET /admin/exec-approvals/pending, POST …/pending/decide: the owner's /approve, audited with
 * the operator's address).
 */
export const CONTROL_SANDBOX_SCRIPT = String.raw`
view("sandbox", "Sandbox", function () {
  return Promise.all([
    api("GET", "/admin/sandbox/status"),
    api("GET", "/admin/exec-approvals/pending"),
  ]).then(function (results) {
    var st = results[0], pending = results[1].sessions;
    var waiting = [];
    pending.forEach(function (s) { s.pending.forEach(function (p) { waiting.push({ sessionKey: s.sessionKey, id: p.id, command: p.command, requestedAt: p.requestedAt }); }); });
    function decide(row, decision, button) {
      act(button, function () { return api("POST", "/admin/exec-approvals/pending/decide", { sessionKey: row.sessionKey, id: row.id, decision: decision }); },
        function (r) { return r.reply; });
    }
    return [
      h("h2", { text: "Sandbox" }),
      h("h3", { text: "Waiting for approval" }),
      h("div", { cls: "card", "data-list": "pending-approvals" }, waiting.length ? table([
        { label: "Session", cell: function (r) { return h("a", { href: "#sessions/" + encodeURIComponent(r.sessionKey), text: r.sessionKey }); } },
        { label: "Id", cell: function (r) { return h("code", { text: r.id }); } },
        { label: "Command", cell: function (r) { return h("code", { text: r.command.slice(0, 300) }); } },
        { label: "Asked", cell: function (r) { return when(r.requestedAt); } },
        { label: "", cell: function (r) {
          var once = h("button", { cls: "primary", "data-action": "approve-once", text: "Approve once" });
          var deny = h("button", { cls: "danger", "data-action": "deny-exec", text: "Deny" });
          once.addEventListener("click", function () { decide(r, "allow-once", once); });
          deny.addEventListener("click", function () { decide(r, "deny", deny); });
          return h("div", { cls: "row" }, once, deny);
        } },
      ], waiting) : empty("No command waits for approval.")),
      h("h3", { text: "Backends" }),
      st.agents.length ? h("div", { cls: "card", "data-list": "sandbox-agents" }, table([
        { label: "Agent", cell: function (a) { return a.agentId; } },
        { label: "Backend", cell: function (a) { return a.backend + (a.mode === "off" ? " (mode off: not isolated)" : ""); } },
        { label: "Scope", cell: function (a) { return h("code", { text: a.scope }); } },
        { label: "Network", cell: function (a) { return a.network ? (a.allowedHosts.length ? "only " + a.allowedHosts.join(", ") : "all") : "none"; } },
      ], st.agents)) : h("div", { cls: "card" }, empty("No agent has a sandbox (agents.defaults.sandbox.backend): exec is off.")),
      st.companion ? companionSandbox(st.companion) : null,
      st.container ? containerSandbox(st.container) : null,
    ];
  });
});

function companionSandbox(c) {
  var host = c.host;
  return h("div", { cls: "card", "data-field": "sandbox-companion" },
    h("h3", { text: "Companion (bubblewrap)" }),
    pairs([
      ["URL", c.url || "companion.url is not set"],
      ["Reachable", h("span", { cls: c.reachable ? "ok" : "err", "data-field": "companion-reachable", text: c.reachable ? "yes" : "no — " + c.error })],
      ["Bubblewrap", host ? h("span", { cls: host.bwrap.ok ? "ok" : "err", text: host.bwrap.ok ? "works" : host.bwrap.detail }) : null],
      ["pty", host ? (host.pty ? "available" : "unavailable (no util-linux script)") : null],
    ]),
    host ? (host.running.length ? table([
      { label: "Running", cell: function (r) { return h("code", { text: r.execId }); } },
      { label: "Scope", cell: function (r) { return r.scope; } },
      { label: "Command", cell: function (r) { return h("code", { text: r.command.slice(0, 160) }); } },
      { label: "Since", cell: function (r) { return when(r.startedAt); } },
    ], host.running) : empty("No command runs on the companion now.")) : null);
}

function containerSandbox(c) {
  return h("div", { cls: "card", "data-field": "sandbox-container" },
    h("h3", { text: "Cloudflare Containers" }),
    c.deployed ? null : h("p", { cls: "err", text: c.problem }),
    c.scopes.map(function (s) {
      if (s.error) return h("p", { cls: "err", text: s.scope + ": could not be asked (" + s.error + ")" });
      return h("div", { "data-scope": s.scope }, pairs([
        ["Scope", s.scope],
        ["State", (s.running ? "running" : "asleep") + " · generation " + s.generation + " · " + s.starts + " start(s)"],
        ["Egress", s.egress ? s.egress.kind + (s.egress.hosts ? " (" + s.egress.hosts.join(", ") + ")" : "") : "none"],
        ["Awake", Math.round(s.awakeMsTotal / 1000) + " s so far · sleeps after " + s.sleepAfter + " idle"],
        ["Open commands", String(s.commands.length)],
      ]));
    }));
}
`;
