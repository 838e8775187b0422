/**
 * The control page's frame: sign-in (the token lives in sessionStorage only), the one fetch helper
 * every view uses (Bearer token; a 401 signs out), DOM building without innerHTML (every value from
 * the API is set as text), tables that become cards on a phone, and hash navigation between views.
 * Views register themselves with `view(id, title, render)`; `start()` runs last.
 */
export const CONTROL_CORE_SCRIPT = String.raw`
var TOKEN_KEY = "edgeclaw.control.token";
var $ = function (id) { return document.getElementById(id); };
var views = [];
var current = null;

function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }

function h(tag, attrs) {
  var el = document.createElement(tag);
  for (var key in attrs || {}) {
    var value = attrs[key];
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") el.textContent = String(value);
    else if (key === "on") for (var type in value) el.addEventListener(type, value[type]);
    else if (key === "cls") el.className = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
  return el;
}
function append(el, child) {
  if (child === undefined || child === null || child === false) return;
  if (Array.isArray(child)) { child.forEach(function (c) { append(el, c); }); return; }
  el.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
}

function ApiError(status, message, code) { this.status = status; this.message = message; this.code = code; }

function api(method, path, body) {
  var init = { method: method, headers: { authorization: "Bearer " + token() } };
  if (body !== undefined) { init.headers["content-type"] = "application/json"; init.body = JSON.stringify(body); }
  return fetch(path, init).then(function (response) {
    return response.text().then(function (text) {
      var data = null;
      try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
      if (response.status === 401) { signOut("The token was not accepted."); throw new ApiError(401, "signed out"); }
      if (!response.ok) {
        var error = (data && data.error) || {};
        throw new ApiError(response.status, error.message || ("HTTP " + response.status), error.code);
      }
      return data;
    });
  });
}

var toastTimer = 0;
function toast(message, isError) {
  var el = $("toast");
  el.textContent = message;
  el.className = isError ? "err" : "";
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(function () { el.hidden = true; }, 4000);
}

/** Runs an action from a button: disabled while it runs, the outcome told, the view redrawn. */
function act(button, work, done) {
  button.disabled = true;
  return work().then(function (result) {
    toast(done(result));
    return rerender();
  }, function (error) {
    button.disabled = false;
    if (error.status !== 401) toast(error.message || String(error), true);
  });
}

function when(value) {
  if (value === null || value === undefined || value === "") return "—";
  var date = new Date(value);
  return isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}
function usd(value) {
  var n = Number(value || 0);
  return "$" + (n === 0 ? "0" : n >= 100 ? n.toFixed(0) : n >= 0.01 ? n.toFixed(2) : n.toFixed(4));
}
function count(value) { return Number(value || 0).toLocaleString(); }

/** columns: [{ label, cell(row) → node|text }]; rows become cards on a phone (CSS). */
function table(columns, rows, onRow) {
  var body = h("tbody", null, rows.map(function (row) {
    var tr = h("tr", onRow ? { cls: "link", tabindex: "0", on: { click: function () { onRow(row); } } } : null,
      columns.map(function (column) { return h("td", { "data-label": column.label || null }, column.cell(row)); }));
    return tr;
  }));
  return h("table", null, h("thead", null, h("tr", null, columns.map(function (c) { return h("th", { text: c.label }); }))), body);
}

/** A URL as code that wraps after its separators (/ ? & = #), never inside a name. */
function urlCode(url, attrs) {
  var el = h("code", attrs);
  el.className = ((attrs && attrs.cls) || "") + " url";
  var tokens = String(url).match(/[^\/?&=#]+|[\/?&=#]+/g) || [];
  tokens.forEach(function (part, index) {
    el.appendChild(document.createTextNode(part));
    // Not inside "https://": the scheme and the host stay together.
    if (/^[\/?&=#]+$/.test(part) && !(index === 1 && /:$/.test(tokens[0])) && index < tokens.length - 1) el.appendChild(document.createElement("wbr"));
  });
  return el;
}

/** label → value pairs as a definition list (values as text). */
function pairs(list) {
  return h("dl", { cls: "kv" }, list.filter(function (p) { return p[1] !== undefined && p[1] !== null && p[1] !== ""; }).map(function (p) {
    return [h("dt", { text: p[0] }), h("dd", null, p[1])];
  }));
}

function empty(text) { return h("p", { cls: "muted", text: text }); }

function view(id, title, render) { views.push({ id: id, title: title, render: render }); }

function rerender() {
  if (!current) return Promise.resolve();
  var main = $("view");
  var state = current;
  return Promise.resolve().then(function () { return state.view.render(state.args); }).then(function (node) {
    if (current !== state) return;
    main.textContent = "";
    append(main, node);
  }, function (error) {
    if (current !== state || error.status === 401) return;
    main.textContent = "";
    append(main, [h("h2", { text: state.view.title }), h("p", { cls: "err", text: error.message || String(error) })]);
  });
}

function route() {
  var parts = location.hash.replace(/^#\/?/, "").split("/");
  var found = views.filter(function (v) { return v.id === parts[0]; })[0] || views[0];
  current = { view: found, args: parts.slice(1).map(decodeURIComponent) };
  Array.prototype.forEach.call($("nav").children, function (a) { a.className = a.getAttribute("data-view") === found.id ? "on" : ""; });
  $("view").textContent = "";
  append($("view"), h("p", { cls: "muted", text: "Loading…" }));
  return rerender();
}

function go(id, args) {
  var hash = "#" + [id].concat((args || []).map(encodeURIComponent)).join("/");
  if (location.hash === hash) route(); else location.hash = hash;
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  current = null;
  $("view").hidden = true; $("nav").hidden = true; $("logout").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message || "";
  $("token-input").value = "";
  $("token-input").focus();
}

function signedIn() {
  $("login").hidden = true;
  $("view").hidden = false; $("nav").hidden = false; $("logout").hidden = false;
  route();
}

function start() {
  $("nav").textContent = "";
  views.forEach(function (v) { $("nav").appendChild(h("a", { href: "#" + v.id, "data-view": v.id, text: v.title })); });
  window.addEventListener("hashchange", function () { if (token()) route(); });
  $("logout").addEventListener("click", function () { signOut(); });
  $("login").addEventListener("submit", function (event) {
    event.preventDefault();
    var value = $("token-input").value.trim();
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    // One cheap authenticated call decides: a wrong token signs out again with a message.
    api("GET", "/admin/agents").then(signedIn, function (error) { if (error.status !== 401) $("login-error").textContent = error.message; });
  });
  if (token()) signedIn(); else signOut();
}
`;
