import { FILES_CSS, FILES_SCRIPT } from "./chat-files.ts";
import { MARKDOWN_CSS, MARKDOWN_SCRIPT } from "./chat-markdown.ts";
import { operatorPageHtml } from "./page-shell.ts";

/**
 * The web chat: one dependency-free page that talks to the gateway's own OpenAI-compatible API
 * (/v1/chat/completions with `stream: true`) using the gateway token. It keeps the token and a
 * stable `user` id in localStorage, so a reload reopens the same session, whose transcript it
 * fetches from /v1/edgeclaw/history. Answers are rendered as Markdown built from DOM text nodes
 * (chat-markdown.ts; no HTML from the model is ever parsed) and carry the label of the model that
 * gave them, after a reload too. A message sent while the agent is still answering is queued and
 * sent after that answer; the queue is kept in localStorage until the gateway accepted the message,
 * and each queued message keeps its idempotency key, so a reload re-sends it without a duplicate.
 * The head, theme and nonces come from the shared shell (page-shell.ts).
 * Written without template literals so it can live in these String.raw blocks unchanged.
 */
export const CHAT_PAGE_HTML = operatorPageHtml({
  title: "edgeclaw chat",
  css: String.raw`  body { display: flex; flex-direction: column; }
  header { display: flex; gap: .5rem; align-items: center; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--card); }
  header h1 { font-size: 1rem; margin: 0 auto 0 0; flex-shrink: 0; }
  header select, header button, form button { font: inherit; padding: .3rem .7rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); cursor: pointer; }
  /* One row on a phone (390 px): the agent picker gives way (long agent names), the buttons never wrap. */
  header button { flex-shrink: 0; white-space: nowrap; }
  header select { min-width: 0; max-width: 45vw; text-overflow: ellipsis; }
  @media (max-width: 480px) {
    header { padding: .5rem .6rem; gap: .35rem; }
    header select, header button { padding: .25rem .45rem; }
  }
  main { flex: 1; overflow-y: auto; padding: 1rem; display: flex; flex-direction: column; gap: .6rem; }
  .msg { max-width: 46rem; padding: .55rem .8rem; border-radius: 10px; white-space: pre-wrap; overflow-wrap: anywhere; }
  .user { align-self: flex-end; background: var(--me); color: #fff; }
  .assistant { align-self: flex-start; background: var(--card); border: 1px solid var(--line); }
  .note { align-self: center; color: var(--muted); font-size: .85rem; }
  .error { align-self: stretch; border: 1px solid var(--err); color: var(--err); background: transparent; }
  .warn { align-self: stretch; border: 1px solid var(--warn); color: var(--warn); background: transparent; }
  .tools { display: flex; flex-direction: column; gap: .15rem; margin-bottom: .35rem; font-size: .82rem; color: var(--muted); white-space: nowrap; }
  .tools div { overflow: hidden; text-overflow: ellipsis; }
  .tools:empty { display: none; }
  .status { color: var(--muted); font-size: .85rem; }
  .model { margin-top: .3rem; font-size: .75rem; }
  .queued { opacity: .7; }
  .queued::after { content: " · queued"; font-size: .75rem; }
${MARKDOWN_CSS}
${FILES_CSS}
  form { display: flex; gap: .5rem; padding: .7rem 1rem; border-top: 1px solid var(--line); background: var(--card); }
  textarea { flex: 1; font: inherit; resize: none; min-height: 2.6rem; max-height: 12rem; padding: .5rem .6rem; border: 1px solid var(--line); border-radius: 8px; background: var(--bg); color: var(--fg); }
  form button { background: var(--me); color: #fff; border: none; }
  form button:disabled { opacity: .5; cursor: default; }
  #token-form { flex-direction: column; align-items: center; justify-content: center; gap: .6rem; flex: 1; border: 0; background: transparent; }
  #token-form input { font: inherit; width: min(26rem, 90vw); padding: .5rem .6rem; border: 1px solid var(--line); border-radius: 8px; background: var(--card); color: var(--fg); }`,
  body: String.raw`<header>
  <h1>edgeclaw</h1>
  <select id="agent" title="Agent" aria-label="Agent"></select>
  <button id="new-chat" type="button" title="Start a new conversation">New chat</button>
  <button id="change-token" type="button" title="Change the gateway token">Token</button>
</header>
<form id="token-form" hidden>
  <label for="token-input">Gateway token</label>
  <input id="token-input" type="password" autocomplete="current-password" placeholder="the gateway token (EDGECLAW_GATEWAY_TOKEN)" required>
  <button type="submit">Connect</button>
  <div id="token-error" class="status"></div>
</form>
<main id="log" aria-live="polite" hidden></main>
<form id="composer" hidden>
  <button id="attach" type="button" title="Attach an image (PNG, JPEG, GIF, WebP)" aria-label="Attach an image">📎</button>
  <input id="file" type="file" accept="image/png,image/jpeg,image/gif,image/webp" hidden>
  <textarea id="input" rows="1" placeholder="Message the agent (Enter to send, Shift+Enter for a new line)" aria-label="Message"></textarea>
  <span id="attached" title="Click to remove"></span>
  <button id="send" type="submit">Send</button>
</form>`,
  script: String.raw`(function () {
  "use strict";
${MARKDOWN_SCRIPT}
  var TOKEN_KEY = "edgeclaw.webchat.token";
  var USER_KEY = "edgeclaw.webchat.user";
  var AGENT_KEY = "edgeclaw.webchat.agent";
  var QUEUE_KEY = "edgeclaw.webchat.queue";
  var $ = function (id) { return document.getElementById(id); };
  var log = $("log"), composer = $("composer"), input = $("input"), sendButton = $("send");
  var tokenForm = $("token-form"), tokenInput = $("token-input"), tokenError = $("token-error"), agentSelect = $("agent");
  var busy = false;
  // Messages sent while an answer is running: { text, id, user, model }, oldest first.
  var queue = [], restoreQueue = true;

  function newId() {
    if (crypto.randomUUID) return crypto.randomUUID();
    var bytes = crypto.getRandomValues(new Uint8Array(16));
    return Array.prototype.map.call(bytes, function (b) { return (b + 256).toString(16).slice(1); }).join("");
  }
  function token() { return localStorage.getItem(TOKEN_KEY) || ""; }
  function user() {
    var id = localStorage.getItem(USER_KEY);
    if (!id) { id = "webchat-" + newId(); localStorage.setItem(USER_KEY, id); }
    return id;
  }
  function model() { return agentSelect.value || localStorage.getItem(AGENT_KEY) || "openclaw/default"; }

  // A token in the URL fragment (#token=...) is taken once and removed from the address bar.
  (function takeTokenFromHash() {
    var match = /(?:^|[#&])token=([^&]+)/.exec(location.hash);
    if (!match) return;
    localStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search);
  })();

  function headers(extra) {
    var h = { "authorization": "Bearer " + token() };
    for (var k in extra) h[k] = extra[k];
    return h;
  }

  function add(kind, text) {
    var el = document.createElement("div");
    el.className = "msg " + kind;
    el.textContent = text;
    log.appendChild(el);
    log.scrollTop = log.scrollHeight;
    return el;
  }

  function answerBubble(text, modelRef) {
    var el = add("assistant", "");
    var body = document.createElement("div");
    body.className = "md";
    el.appendChild(body);
    renderMarkdown(body, withoutMediaLines(text));
    if (modelRef) modelLabel(el, modelRef);
    return el;
  }
  function modelLabel(bubble, modelRef) {
    var label = bubble.querySelector(".model");
    if (!label) { label = document.createElement("div"); label.className = "status model"; bubble.appendChild(label); }
    label.textContent = modelRef;
  }

  function saveQueue() {
    var kept = queue.map(function (m) { return { text: m.text, id: m.id, user: m.user, model: m.model, images: m.images }; });
    try {
      if (kept.length) localStorage.setItem(QUEUE_KEY, JSON.stringify(kept));
      else localStorage.removeItem(QUEUE_KEY);
    } catch (e) {
      // An image too large for localStorage: the queue is kept without it.
      localStorage.setItem(QUEUE_KEY, JSON.stringify(kept.map(function (m) { return { text: m.text, id: m.id, user: m.user, model: m.model }; })));
    }
  }
  function loadQueue() {
    try { return JSON.parse(localStorage.getItem(QUEUE_KEY) || "[]") || []; } catch (e) { return []; }
  }

  function showError(error) {
    if (error && error.code === "not_configured") {
      add("warn", error.message || "No model is configured for this agent.");
    } else {
      add("error", (error && error.message) || "Something went wrong.");
    }
  }

  function askForToken(message) {
    log.hidden = true; composer.hidden = true; tokenForm.hidden = false;
    agentSelect.hidden = true; $("new-chat").hidden = true;
    tokenError.textContent = message || "";
    tokenInput.value = "";
    tokenInput.focus();
  }

  function readError(response) {
    return response.json().then(function (body) {
      return (body && body.error) || { message: "HTTP " + response.status };
    }, function () { return { message: "HTTP " + response.status }; });
  }

  function start() {
    if (!token()) { askForToken(); return; }
    tokenForm.hidden = true; log.hidden = false; composer.hidden = false;
    agentSelect.hidden = false; $("new-chat").hidden = false;
    fetch("/v1/models", { headers: headers({}) }).then(function (response) {
      if (response.status === 401) { askForToken("That token was not accepted."); return null; }
      if (!response.ok) return readError(response).then(function (error) { showError(error); return null; });
      return response.json();
    }).then(function (list) {
      if (!list) return;
      var saved = localStorage.getItem(AGENT_KEY) || "openclaw/default";
      agentSelect.textContent = "";
      list.data.forEach(function (m) {
        if (m.id === "openclaw") return;
        var option = document.createElement("option");
        option.value = m.id; option.textContent = m.id === "openclaw/default" ? "default agent" : m.id.replace("openclaw/", "");
        agentSelect.appendChild(option);
      });
      agentSelect.value = saved;
      if (!agentSelect.value) agentSelect.value = "openclaw/default";
      loadHistory();
    }).catch(function () { showError({ message: "Cannot reach the gateway." }); });
  }

  function loadHistory() {
    log.textContent = "";
    var url = "/v1/edgeclaw/history?user=" + encodeURIComponent(user()) + "&model=" + encodeURIComponent(model());
    fetch(url, { headers: headers({}) }).then(function (response) {
      if (response.status === 401) { askForToken("That token was not accepted."); return null; }
      if (!response.ok) return readError(response).then(function (error) { showError(error); return null; });
      return response.json();
    }).then(function (body) {
      if (!body) return;
      if (!body.data.length) add("note", "New conversation. Say hello.");
      body.data.forEach(function (entry) {
        var bubble;
        if (entry.role === "assistant" && !entry.notice) bubble = entry.text ? answerBubble(entry.text, entry.model) : add("assistant", "");
        else bubble = add(entry.notice ? "warn" : entry.role, entry.text);
        if (entry.media && entry.media.length) addFiles(bubble, entry.media);
      });
      input.focus();
      // Once per page: messages queued before a reload and not yet accepted, sent now with their own keys.
      if (restoreQueue) {
        restoreQueue = false;
        queue = loadQueue().filter(function (m) { return m.user === user() && m.model === model(); });
        queue.forEach(function (m) { m.el = userBubble("user queued", m); });
        if (!busy) sendNext();
      } else {
        queue.forEach(function (m) { if (m.user === user() && m.model === model() && m.el) log.appendChild(m.el); });
      }
    }).catch(function () { showError({ message: "Could not load the conversation." }); });
  }

  function toolLine(box, lines, event) {
    var line = lines[event.callId];
    if (!line) {
      line = document.createElement("div");
      lines[event.callId] = line;
      box.appendChild(line);
    }
    var state = event.phase === "start" ? "running…" : (event.isError ? "failed" : "done");
    var preview = event.preview && event.phase === "end" ? event.preview.replace(/\s+/g, " ").trim() : "";
    if (preview.length > 120) preview = preview.slice(0, 119) + "…";
    line.textContent = "▸ tool " + event.name + ": " + state + (preview ? " — " + preview : "");
    line.title = event.preview || "";
  }

  // Reads the SSE stream: data chunks carry content deltas; "tool" and "status" events are
  // edgeclaw extras this page asks for with x-edgeclaw-events.
  function readStream(response, bubble) {
    var tools = document.createElement("div");
    tools.className = "tools";
    var body = document.createElement("div");
    body.className = "md";
    var status = document.createElement("div");
    status.className = "status";
    status.textContent = "waiting…";
    bubble.textContent = "";
    bubble.appendChild(tools); bubble.appendChild(body); bubble.appendChild(status);
    var lines = {}, text = "", buffer = "", failed = null;
    var reader = response.body.getReader(), decoder = new TextDecoder();

    function handle(block) {
      var event = "message", data = [];
      block.split("\n").forEach(function (line) {
        if (line.indexOf("event:") === 0) event = line.slice(6).trim();
        else if (line.indexOf("data:") === 0) data.push(line.slice(5).replace(/^ /, ""));
      });
      if (!data.length) return;
      var raw = data.join("\n");
      if (raw === "[DONE]") return;
      var payload;
      try { payload = JSON.parse(raw); } catch (e) { return; }
      if (event === "tool") { toolLine(tools, lines, payload); return; }
      if (event === "status") {
        if (payload.state === "reset") { text = ""; body.textContent = ""; status.textContent = "retrying…"; return; }
        status.textContent = payload.state === "queued" ? "queued…" : payload.state === "running" ? "thinking…" : "";
        if (payload.state === "done" && payload.modelRef) { status.textContent = payload.modelRef; status.className = "status model"; }
        // The answer's files follow it as a message of their own, as on a chat channel.
        if (payload.state === "done" && payload.media && payload.media.length) addFiles(add("assistant", ""), payload.media);
        return;
      }
      if (payload.error) { failed = payload.error; return; }
      var choice = payload.choices && payload.choices[0];
      if (choice && choice.delta && choice.delta.content) {
        text += choice.delta.content;
        renderMarkdown(body, withoutMediaLines(text));
        log.scrollTop = log.scrollHeight;
      }
    }

    function pump() {
      return reader.read().then(function (step) {
        if (step.value) buffer += decoder.decode(step.value, { stream: true });
        var split = buffer.split(/\r?\n\r?\n/);
        buffer = split.pop();
        split.forEach(handle);
        if (!step.done) return pump();
        if (buffer.trim()) handle(buffer);
        if (failed) {
          if (!text) bubble.remove();
          else status.textContent = "";
          showError(failed);
        } else if (!text) {
          body.textContent = "(no reply)";
        }
      });
    }
    return pump();
  }

  function sendNext() {
    if (!queue.length) return;
    var next = queue[0];
    next.el.classList.remove("queued");
    send(next);
  }

  function userBubble(kind, message) {
    var el = add(kind, message.text);
    if (message.images && message.images.length)
      addFiles(el, message.images.map(function (url) { return { url: url, mimeType: url.slice(5, url.indexOf(";")), name: "image" }; }));
    return el;
  }

  // message: { text, id, user, model, images?, el? }; it leaves the queue once the gateway accepted it.
  function send(message) {
    busy = true;
    var first = log.querySelector(".note");
    if (first && log.children.length === 1) first.remove();
    if (!message.el) message.el = userBubble("user", message);
    var bubble = add("assistant", "");
    var waiting = document.createElement("div");
    waiting.className = "status";
    waiting.textContent = "sending…";
    bubble.appendChild(waiting);
    var text = message.text;
    function accepted() {
      var at = queue.indexOf(message);
      if (at >= 0) { queue.splice(at, 1); saveQueue(); }
    }
    fetch("/v1/chat/completions", {
      method: "POST",
      headers: headers({
        "content-type": "application/json",
        "x-openclaw-message-channel": "webchat",
        "x-edgeclaw-events": "tools",
        "idempotency-key": message.id
      }),
      body: JSON.stringify({ model: message.model, user: message.user, stream: true, messages: [{ role: "user", content: contentOf(message) }] })
    }).then(function (response) {
      if (response.status === 401) { bubble.remove(); askForToken("That token was not accepted."); return; }
      accepted();
      if (!response.ok) return readError(response).then(function (error) { bubble.remove(); showError(error); });
      return readStream(response, bubble);
    }).catch(function () {
      bubble.remove();
      showError({ message: "The connection to the gateway was lost." });
    }).then(function () {
      busy = false; input.focus();
      if (queue.length && queue[0] !== message) sendNext();
    });
  }

  composer.addEventListener("submit", function (e) {
    e.preventDefault();
    var text = input.value.trim();
    if (!text && !pending) return;
    input.value = ""; input.style.height = "";
    var message = { text: text, id: newId(), user: user(), model: model() };
    if (pending) { message.images = [pending.url]; clearAttachment(); }
    queue.push(message);
    saveQueue();
    // While an answer is running the message waits its turn (sent right after, never dropped).
    if (busy) { message.el = userBubble("user queued", message); return; }
    send(message);
  });
  input.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); composer.requestSubmit(); }
  });
  input.addEventListener("input", function () {
    input.style.height = "auto";
    input.style.height = Math.min(input.scrollHeight, 192) + "px";
  });
  tokenForm.addEventListener("submit", function (e) {
    e.preventDefault();
    localStorage.setItem(TOKEN_KEY, tokenInput.value.trim());
    start();
  });
  $("change-token").addEventListener("click", function () { askForToken(); });
  $("new-chat").addEventListener("click", function () {
    localStorage.setItem(USER_KEY, "webchat-" + newId());
    loadHistory();
  });
  agentSelect.addEventListener("change", function () {
    localStorage.setItem(AGENT_KEY, agentSelect.value);
    loadHistory();
  });
${FILES_SCRIPT}
  start();
})();`,
});
