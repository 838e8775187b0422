/**
 * The control page's Environments view (AcaClaw's environment tab): for each agent with a
 * computing environment (GET /admin/sandbox/status names the agents with a sandbox; GET
 * /admin/env?agent= answers for those with computeEnv), its conda envs with Python/R versions,
 * description and why each was created, the packages of each env, R status (conda R, "Using system
 * R" or "R not installed", with Install R into the primary env), the open "create a new env?"
 * questions of the install cascade with Create env (POST /admin/env/create with the question's id
 * and proposal) / Decline (POST /admin/env/questions/:id/decline), and the install history.
 */
export const CONTROL_ENVIRONMENTS_SCRIPT = String.raw`
view("environments", "Environments", function () {
  return api("GET", "/admin/sandbox/status").then(function (st) {
    var agents = st.agents.map(function (a) { return a.agentId; });
    return Promise.all(agents.map(function (agent) {
      return api("GET", "/admin/env?agent=" + encodeURIComponent(agent)).then(
        function (status) { return status; },
        function (error) {
          if (error.code === "no_compute_env") return null;
          if (error.status === 401) throw error;
          return { agentId: agent, error: error.message };
        });
    })).then(function (all) {
      var found = all.filter(function (s) { return s; });
      return [h("h2", { text: "Environments" })].concat(found.length ? found.map(agentEnvs) :
        [h("div", { cls: "card" }, empty("No agent has a computing environment: set agents.defaults.computeEnv.enabled (and a sandbox backend)."))]);
    });
  });
});

function agentEnvs(s) {
  if (s.error) return h("div", { cls: "card", "data-agent": s.agentId }, h("h3", { text: s.agentId }), h("p", { cls: "err", text: s.error }));
  var primary = s.envs.filter(function (e) { return e.type === "primary"; })[0];
  return h("div", { "data-agent": s.agentId },
    h("h3", { text: "Agent " + s.agentId }),
    h("div", { cls: "card" }, pairs([
      ["conda", s.conda.exe ? h("code", { text: s.conda.exe }) : h("span", { cls: "err", text: "not found in the sandbox" })],
      ["Default env", h("code", { text: s.manifest.defaultEnv })],
      ["Not registered", s.unregistered.length ? s.unregistered.join(", ") : null],
    ]), rCard(s, primary)),
    h("h3", { text: "Waiting for an answer" }),
    h("div", { cls: "card", "data-list": "env-questions" }, s.questions.length ? s.questions.map(function (q) { return question(s.agentId, q); }) :
      empty("No open question: every install so far found an env.")),
    h("h3", { text: "Envs" }),
    s.envs.length ? s.envs.map(envCard) : h("div", { cls: "card" }, empty("No env registered yet: the primary env was not found in the sandbox.")),
    h("h3", { text: "Install history" }),
    h("div", { cls: "card", "data-list": "env-installs" }, s.installs.length ? table([
      { label: "When", cell: function (r) { return when(r.finishedAt || r.startedAt); } },
      { label: "What", cell: function (r) { return r.kind; } },
      { label: "Packages", cell: function (r) { return h("code", { text: r.packages.join(" ").slice(0, 200) }); } },
      { label: "Env", cell: function (r) { return r.envName || (r.proposal ? "→ " + r.proposal.name + "?" : "—"); } },
      { label: "Status", cell: function (r) { return h("span", { cls: statusClass(r.status), "data-status": r.status, text: r.status }); } },
      { label: "Detail", cell: function (r) { return r.error || tried(r) || r.reason || ""; } },
    ], s.installs) : empty("Nothing installed through edgeclaw yet.")));
}

function statusClass(status) {
  return status === "installed" || status === "created" || status === "answered" ? "ok" :
    status === "needs-new-env" || status === "running" || status === "planned" ? "warn" :
    status === "declined" ? "muted" : "err";
}

function tried(r) {
  return r.tried.map(function (t) { return t.env + ": " + (t.ok ? "solves" : "conflict"); }).join("; ");
}

function rCard(s, primary) {
  var r = s.r;
  var installR = function () {
    var b = h("button", { cls: "primary", "data-action": "install-r", text: "Install R into " + (primary ? primary.name : "the primary env") });
    b.addEventListener("click", function () {
      act(b, function () { return api("POST", "/admin/env/install", { agent: s.agentId, packages: ["r-base", "r-irkernel", "r-essentials"], env: primary ? primary.name : undefined }); },
        function (res) { return res.text; });
    });
    return b;
  };
  if (r.kind === "conda") return h("p", { "data-field": "r-status" }, h("span", { cls: "ok", text: "R " + r.version }), " in conda env " + r.env);
  if (r.kind === "system") return h("div", { "data-field": "r-status" },
    h("p", {}, h("span", { cls: "badge warn", text: r.banner }), " " + r.path + (r.version ? " (R " + r.version + ")" : "")), installR());
  return h("div", { "data-field": "r-status" }, h("p", {}, h("span", { cls: "badge", text: r.banner }), " — or run ", h("code", { text: r.install })), installR());
}

function question(agent, q) {
  var p = q.proposal || { name: "", packages: q.packages, reason: "" };
  var description = h("input", { "aria-label": "Description of " + p.name, value: "For " + p.packages.join(" "), "data-field": "env-description" });
  var create = h("button", { cls: "primary", "data-action": "create-env", text: "Create " + p.name });
  var decline = h("button", { cls: "danger", "data-action": "decline-env", text: "Decline" });
  create.addEventListener("click", function () {
    act(create, function () {
      return api("POST", "/admin/env/create", { agent: agent, name: p.name, packages: p.packages, description: description.value || ("For " + p.packages.join(" ")), reason: p.reason, questionId: q.id });
    }, function (res) { return res.text; });
  });
  decline.addEventListener("click", function () {
    act(decline, function () { return api("POST", "/admin/env/questions/" + encodeURIComponent(q.id) + "/decline", { agent: agent }); },
      function () { return "Declined: no env is created for " + p.packages.join(" "); });
  });
  return h("div", { "data-question": q.id },
    h("p", {}, h("code", { text: p.packages.join(" ") }), " conflicts with every env. Create a new env ", h("code", { text: p.name }), " for it?"),
    h("p", { cls: "muted", text: p.reason + " · asked " + when(q.startedAt) + (q.sessionKey ? " in " + q.sessionKey : "") }),
    h("div", { cls: "row" }, description, create, decline));
}

function envCard(e) {
  var names = Object.keys(e.packages).sort();
  var versions = [e.pythonVersion ? "Python " + e.pythonVersion : "", e.rVersion ? "R " + e.rVersion : ""].filter(function (x) { return x; }).join(" · ");
  var list = h("details", {}, h("summary", { text: names.length + " packages" }), table([
    { label: "Package", cell: function (n) { return h("code", { text: n }); } },
    { label: "Version", cell: function (n) { return e.packages[n]; } },
  ], names));
  return h("div", { cls: "card", "data-env": e.name },
    h("div", { cls: "row" }, h("strong", { text: e.name }), h("span", { cls: "badge", text: e.type }), h("span", { cls: "muted grow", text: versions })),
    h("p", { text: e.description || "no description" }),
    e.createdReason ? h("p", { cls: "muted", text: "Created because " + e.createdReason }) : null,
    e.disciplines.length ? h("p", { cls: "muted", text: "Disciplines: " + e.disciplines.join(", ") }) : null,
    pairs([["Since", when(e.createdAt)], ["Lock", e.explicitLock ? "kept (rebuilt from it when a sandbox lacks it)" : "not listed yet"]]),
    list);
}
`;
