/**
 * The control page's operational views: sessions (search, transcript, sandbox, reset), pairing requests
 * (approve, deny), dead letters (inspect, retry, discard) and cron jobs (run now, enable/disable,
 * runs). Each is one or two admin API calls; every change goes through the same endpoints as the
 * CLI, so it is validated and audited there.
 */
export const CONTROL_OPERATIONS_SCRIPT = String.raw`
function enc(value) { return encodeURIComponent(value); }

view("sessions", "Sessions", function (args) {
  if (args[0]) return sessionDetail(args[0]);
  var query = args.length ? "" : (sessionStorage.getItem("edgeclaw.control.q") || "");
  var input = h("input", { type: "search", cls: "grow", placeholder: "session key, channel or sender id", value: query, "aria-label": "Search sessions" });
  var form = h("form", { cls: "row", on: { submit: function (event) {
    event.preventDefault();
    sessionStorage.setItem("edgeclaw.control.q", input.value.trim());
    rerender();
  } } }, input, h("button", { type: "submit", text: "Search" }));
  var q = sessionStorage.getItem("edgeclaw.control.q") || "";
  return api("GET", "/admin/sessions?limit=100" + (q ? "&q=" + enc(q) : "")).then(function (data) {
    input.value = q;
    var list = data.sessions.length ? table([
      { label: "Session", cell: function (s) { return h("code", { text: s.sessionKey }); } },
      { label: "Channel", cell: function (s) { return s.channel || "—"; } },
      { label: "Agent", cell: function (s) { return s.agentId; } },
      { label: "Last activity", cell: function (s) { return when(s.lastInteractionAt || s.updatedAt); } },
      { label: "Tokens", cell: function (s) { return count(s.inputTokens + s.outputTokens); } },
    ], data.sessions, function (s) { go("sessions", [s.sessionKey]); }) : empty(q ? "No session matches." : "No sessions yet.");
    return [h("h2", { text: "Sessions" }), h("div", { cls: "card" }, form), h("div", { cls: "card" }, list)];
  });
});

var resetTo = {};

function sessionDetail(key) {
  return Promise.all([
    api("GET", "/admin/sessions/" + enc(key) + "?limit=200"),
    api("GET", "/admin/sessions/" + enc(key) + "/dead-letters").catch(function () { return { deadLetters: [] }; }),
    api("GET", "/admin/sessions/" + enc(key) + "/subagents").catch(function (error) { return { subagents: [], error: error.message || String(error) }; }),
  ]).then(function (results) {
    var data = results[0], s = data.session;
    // The index in Postgres learns a reset's new session id with the session's next mirror pass;
    // until then the id the reset answered is the current one.
    var sessionId = resetTo[key] || s.sessionId;
    var reset = h("button", { cls: "danger", "data-action": "reset", text: "Reset session" });
    reset.addEventListener("click", function () {
      if (!confirm("Start a fresh session for " + key + "? The transcript so far is kept in the archive.")) return;
      act(reset, function () { return api("POST", "/admin/sessions/" + enc(key) + "/reset"); }, function (r) {
        resetTo[key] = r.result.sessionId;
        return "Session reset (new id " + r.result.sessionId + ")";
      });
    });
    var transcript = data.transcript.filter(function (e) { return e.sessionId === sessionId; });
    return [
      h("div", { cls: "row" }, h("a", { href: "#sessions", text: "← Sessions" })),
      h("h2", null, h("code", { text: key })),
      h("div", { cls: "card row" },
        h("div", { cls: "grow" },
          h("div", null, "Agent ", h("b", { text: s.agentId }), " · channel ", h("b", { text: s.channel || "—" }), " · ", s.chatType || ""),
          h("div", { cls: "muted", "data-field": "session-id", text: "session id " + sessionId + " · started " + when(s.sessionStartedAt) + " · tokens " + count(s.inputTokens) + " in / " + count(s.outputTokens) + " out" })),
        reset),
      results[1].deadLetters.length ? h("p", { cls: "warn" }, results[1].deadLetters.length + " dead letter(s): ", h("a", { href: "#dead-letters", text: "see Dead letters" })) : null,
      subagentsSection(results[2]),
      sandboxSection(data.sandbox),
      h("h3", { text: "Transcript (current session)" }),
      h("div", { cls: "card", "data-list": "transcript" }, transcript.length ? transcript.map(function (e) {
        return h("div", { cls: "msg " + e.role }, h("span", { cls: "who", text: e.role + " · " + when(e.createdAt) }), transcriptText(e.content));
      }) : empty("Nothing in this session yet (a reset starts an empty one; the archive keeps earlier ones).")),
    ];
  });
}

// The session's sub-agents (GET /admin/sessions/:key/subagents, workers/admin-subagents.ts): each
// child's label, status, run time, tokens and cost; a row opens the child's own session.
function subagentsSection(data) {
  if (data.error) return h("p", { cls: "warn", text: "Sub-agents: could not be read (" + data.error + ")" });
  if (!data.subagents.length) return null;
  function status(c) {
    if (c.state !== "ended") return c.killRequested ? "stopping" : c.state;
    return { ok: "completed", error: "failed", timeout: "timed out", aborted: "stopped" }[c.outcome] || c.outcome || "ended";
  }
  return [
    h("h3", { text: "Sub-agents" }),
    table([
      { label: "Sub-agent", cell: function (c) { return [h("b", { text: c.label || c.taskName || c.task.slice(0, 60) }), h("div", { cls: "muted" }, h("code", { text: c.childSessionKey }))]; } },
      { label: "Status", cell: function (c) { return h("span", { "data-field": "status", text: status(c) }); } },
      { label: "Started", cell: function (c) { return when(c.startedAt); } },
      { label: "Run time", cell: function (c) { return h("span", { "data-field": "runtime", text: duration(c.runtimeMs) }); } },
      { label: "Tokens", cell: function (c) { return c.inputTokens === undefined ? "—" : count(c.inputTokens) + " in / " + count(c.outputTokens) + " out"; } },
      { label: "Cost", cell: function (c) { return h("span", { "data-field": "cost", text: c.costUsd === undefined ? "—" : usd(c.costUsd) }); } },
    ], data.subagents, function (c) { go("sessions", [c.childSessionKey]); }),
    data.costError ? h("p", { cls: "muted", text: "Cost unavailable: " + data.costError }) : null,
  ];
}

function duration(ms) {
  if (ms === undefined || ms === null) return "—";
  var s = Math.round(ms / 1000);
  if (s < 60) return s + " s";
  var m = Math.floor(s / 60);
  return m < 60 ? m + " min " + (s % 60) + " s" : Math.floor(m / 60) + " h " + (m % 60) + " min";
}

// The session's sandbox (GET /admin/sessions/:key → sandbox, functions/sandbox/report.ts):
// where its commands run, their metered time, the scope's container, each command and its end.
function sandboxSection(sb) {
  if (!sb) return null;
  if (sb.error) return h("p", { cls: "warn", text: "Sandbox: could not be read (" + sb.error + ")" });
  if (!sb.placement) return null;
  var p = sb.placement, u = sb.usage, c = sb.container;
  var head = p.backend + (p.sandboxed ? "" : " (mode off: not isolated)") + " · scope " + p.scope +
    " · network " + (p.network ? "allowed" : "none") + " · " + u.commands + " finished, " + u.seconds.toFixed(1) + " s" +
    (u.containerSeconds ? " (container estimate $" + u.estimatedUsd.toFixed(6) + ")" : "");
  var box = c ? (c.error ? "container: could not be asked (" + c.error + ")" :
    "container: " + (c.running ? "running" : "asleep") + " · generation " + c.generation + " · " + c.starts +
    " start(s) · egress " + (c.egress ? c.egress.kind : "none") + " · sleeps after " + c.sleepAfter + " idle") : null;
  function ended(x) {
    if (x.state !== "exited") return x.state;
    return x.timedOut ? "timed out" : x.signal ? "killed (" + x.signal + ")" : "exit " + x.exitCode;
  }
  return [
    h("h3", { text: "Sandbox" }),
    h("div", { cls: "card", "data-list": "sandbox" },
      h("div", { cls: "muted", "data-field": "sandbox-summary", text: head }),
      box ? h("div", { cls: "muted", "data-field": "sandbox-container", text: box }) : null,
      sb.commands.length ? table([
        { label: "Id", cell: function (x) { return h("code", { text: x.id }); } },
        { label: "Command", cell: function (x) { return h("code", { text: x.command.slice(0, 160) }); } },
        { label: "State", cell: function (x) { return ended(x) + (x.background ? " · background" : ""); } },
        { label: "Started", cell: function (x) { return when(new Date(x.startedAt).toISOString()); } },
        { label: "Took", cell: function (x) { return x.durationMs === null ? "—" : (x.durationMs / 1000).toFixed(1) + " s"; } },
      ], sb.commands) : empty("No commands in this session.")),
  ];
}

function transcriptText(content) {
  if (typeof content === "string") return content;
  if (content && typeof content.content === "string") return content.content;
  return JSON.stringify(content);
}

view("pairing", "Pairing", function () {
  return api("GET", "/admin/pairing").then(function (data) {
    var rows = data.requests;
    function decide(r, action, button) {
      act(button, function () { return api("POST", "/admin/pairing/" + enc(r.channel) + "/" + action, { code: r.code }); },
        function () { return (action === "approve" ? "Approved " : "Denied ") + (r.senderName || r.senderId) + " on " + r.channel; });
    }
    return [h("h2", { text: "Pairing requests" }), h("div", { cls: "card" }, rows.length ? table([
      { label: "Channel", cell: function (r) { return r.channel + (r.accountId !== "default" ? " (" + r.accountId + ")" : ""); } },
      { label: "Sender", cell: function (r) { return [h("code", { text: r.senderId }), r.senderName ? " " + r.senderName : ""]; } },
      { label: "Code", cell: function (r) { return h("code", { text: r.code }); } },
      { label: "Expires", cell: function (r) { return when(r.expiresAt); } },
      { label: "", cell: function (r) {
        var approve = h("button", { cls: "primary", "data-action": "approve", text: "Approve" });
        var deny = h("button", { cls: "danger", "data-action": "deny", text: "Deny" });
        approve.addEventListener("click", function () { decide(r, "approve", approve); });
        deny.addEventListener("click", function () { decide(r, "reject", deny); });
        return h("div", { cls: "row" }, approve, deny);
      } },
    ], rows) : empty("No pending pairing requests."))];
  });
});

view("dead-letters", "Dead letters", function () {
  return api("GET", "/admin/dead-letters?limit=50").then(function (data) {
    var cards = [];
    data.sessions.forEach(function (session) {
      session.deadLetters.forEach(function (d) {
        var body = { sessionKey: session.sessionKey, id: d.id };
        var buttons = h("div", { cls: "row" });
        if (d.retryable) {
          var retry = h("button", { cls: "primary", "data-action": "retry", text: "Retry" });
          retry.addEventListener("click", function () { act(retry, function () { return api("POST", "/admin/dead-letters/retry", body); }, function () { return "Queued again: " + d.id; }); });
          buttons.appendChild(retry);
        }
        var discard = h("button", { cls: "danger", "data-action": "discard", text: "Discard" });
        discard.addEventListener("click", function () {
          if (!confirm("Discard this dead letter?")) return;
          act(discard, function () { return api("POST", "/admin/dead-letters/discard", body); }, function () { return "Discarded " + d.id; });
        });
        buttons.appendChild(discard);
        cards.push(h("div", { cls: "card", "data-dead-letter": d.id },
          h("div", { cls: "row" }, h("span", { cls: "badge " + (d.kind === "reply" ? "warn" : "err"), text: d.kind === "reply" ? "reply" : "inbound event" }),
            h("b", { text: d.channel }), h("span", { cls: "muted", text: "to " + d.to + " · " + when(d.at) + " · " + d.attempts + " attempt(s)" })),
          h("div", { cls: "muted" }, "session ", h("a", { href: "#sessions/" + enc(session.sessionKey), text: session.sessionKey }), " · id ", h("code", { text: d.id })),
          h("div", { cls: "err", text: "Reason: " + (d.error || "unknown") }),
          h("pre", { text: d.text || "(no text)" }),
          d.retryable ? null : h("p", { cls: "muted", text: "The sender was told this message was set aside; it can be discarded, not retried." }),
          buttons));
      });
    });
    return [h("h2", { text: "Dead letters" }), cards.length ? cards : h("div", { cls: "card" }, empty("Nothing was given up on."))];
  });
});

function schedule(s) {
  if (!s) return "—";
  if (s.kind === "cron") return s.expr + " (" + s.tz + ")";
  if (s.kind === "every") return "every " + Math.round(s.everyMs / 60000) + " min";
  return "at " + when(s.atMs);
}

view("cron", "Cron", function (args) {
  if (args[0]) return cronRuns(args[0]);
  return api("GET", "/admin/cron").then(function (data) {
    return [h("h2", { text: "Cron jobs" }), h("div", { cls: "card" }, data.jobs.length ? table([
      { label: "Job", cell: function (j) { return [h("b", { text: j.name }), h("div", { cls: "muted", text: j.agentId + " · " + j.sessionTarget })]; } },
      { label: "Schedule", cell: function (j) { return schedule(j.schedule); } },
      { label: "Next run", cell: function (j) { return j.enabled ? when(j.nextRunAt) : "disabled"; } },
      { label: "Last run", cell: function (j) { return j.lastRunAt ? when(j.lastRunAt) + " · " + (j.lastStatus || "") : "never"; } },
      { label: "", cell: function (j) {
        var run = h("button", { "data-action": "run-now", text: "Run now" });
        var toggle = h("button", { "data-action": "toggle", text: j.enabled ? "Disable" : "Enable" });
        var runs = h("button", { text: "Runs" });
        run.addEventListener("click", function () { act(run, function () { return api("POST", "/admin/cron/" + enc(j.id) + "/run"); }, function () { return "Started " + j.name; }); });
        toggle.addEventListener("click", function () { act(toggle, function () { return api("PATCH", "/admin/cron/" + enc(j.id), { enabled: !j.enabled }); }, function () { return (j.enabled ? "Disabled " : "Enabled ") + j.name; }); });
        runs.addEventListener("click", function () { go("cron", [j.id]); });
        return h("div", { cls: "row" }, run, toggle, runs);
      } },
    ], data.jobs) : empty("No cron jobs. Add one with: edgeclaw cron add"))];
  });
});

function cronRuns(id) {
  return api("GET", "/admin/cron/" + enc(id) + "/runs?limit=50").then(function (data) {
    return [h("div", { cls: "row" }, h("a", { href: "#cron", text: "← Cron jobs" })), h("h2", { text: "Runs of " + id }), h("div", { cls: "card" }, data.runs.length ? table([
      { label: "Scheduled for", cell: function (r) { return when(r.scheduledFor) + (r.manual ? " (manual)" : ""); } },
      { label: "Status", cell: function (r) { return h("span", { cls: r.status === "error" ? "err" : r.status === "ok" ? "ok" : "", text: r.status }); } },
      { label: "Cost", cell: function (r) { return usd(r.costUsd) + " · " + count(r.inputTokens + r.outputTokens) + " tokens"; } },
      { label: "Result", cell: function (r) { return r.error || r.summary || "—"; } },
    ], data.runs) : empty("No runs yet."))];
  });
}
`;
