/**
 * The web chat's files (chat-page.ts splices these in): the agent's files shown after its answer
 * from signed links to this origin's `/media/` route (an image, an audio player, or a download
 * link; nothing else is loaded), its `MEDIA:` lines hidden from the answer, and the 📎 button that
 * attaches one image to the next message as an OpenAI `image_url` part with a `data:` URL.
 * Written without template literals so it can live in these String.raw blocks unchanged; the
 * script runs inside the page's function, after its helpers (`$`, `add`, `input`, `showError`).
 */
export const FILES_CSS = String.raw`  .files { display: flex; flex-direction: column; align-items: flex-start; gap: .35rem; margin-top: .35rem; }
  .files:empty { display: none; }
  .files img { display: block; max-width: 100%; max-height: 18rem; border-radius: 6px; background: #fff; }
  .files audio { width: min(100%, 20rem); }
  .files a { color: inherit; }
  #attach { background: var(--bg); color: var(--fg); border: 1px solid var(--line); }
  #attached { align-self: center; font-size: .82rem; color: var(--muted); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 30vw; }
  #attached:empty { display: none; }`;

export const FILES_SCRIPT = String.raw`  var fileInput = $("file"), attached = $("attached");
  // The image picked for the next message: { name, url } (a data: URL), or null.
  var pending = null;

  // Files of a turn: the agent's (signed links to this origin's /media/ route) or an image the
  // operator attached (a data: URL). Anything else is not loaded.
  function addFiles(bubble, files) {
    var box = document.createElement("div");
    box.className = "files";
    (files || []).forEach(function (file) {
      var url = String(file.url || ""), type = String(file.mimeType || ""), name = String(file.name || "file");
      if (url.indexOf("/media/") !== 0 && url.indexOf("data:image/") !== 0) return;
      var el;
      if (type.indexOf("image/") === 0) { el = document.createElement("img"); el.src = url; el.alt = name; el.title = name; }
      else if (type.indexOf("audio/") === 0 && url.indexOf("/media/") === 0) { el = document.createElement("audio"); el.controls = true; el.preload = "none"; el.src = url; el.title = name; }
      else if (url.indexOf("/media/") === 0) { el = document.createElement("a"); el.href = url; el.download = name; el.textContent = "📎 " + name; }
      if (el) box.appendChild(el);
    });
    bubble.appendChild(box);
    log.scrollTop = log.scrollHeight;
  }
  // The agent's MEDIA: lines (a line of its own, outside code fences) became the files shown below it.
  function withoutMediaLines(text) {
    var fenced = false;
    return String(text).split("\n").filter(function (line) {
      if (/^\s*(\x60\x60\x60|~~~)/.test(line)) fenced = !fenced;
      return fenced || !/^MEDIA:\s*\S/.test(line);
    }).join("\n").replace(/\n{3,}/g, "\n\n").trim();
  }

  // A message with an image is OpenAI content parts: the text, then each image as a data: URL.
  function contentOf(message) {
    if (!message.images || !message.images.length) return message.text;
    var parts = message.text ? [{ type: "text", text: message.text }] : [];
    message.images.forEach(function (url) { parts.push({ type: "image_url", image_url: { url: url } }); });
    return parts;
  }
  function clearAttachment() { pending = null; attached.textContent = ""; fileInput.value = ""; }
  $("attach").addEventListener("click", function () { fileInput.click(); });
  attached.addEventListener("click", clearAttachment);
  fileInput.addEventListener("change", function () {
    var file = fileInput.files && fileInput.files[0];
    if (!file) return;
    // The gateway refuses more than 10 MB per image (gateway.http.endpoints.chatCompletions.images).
    if (file.size > 10 * 1024 * 1024) { clearAttachment(); showError({ message: file.name + " is over 10 MB." }); return; }
    var reader = new FileReader();
    reader.onload = function () { pending = { name: file.name, url: String(reader.result) }; attached.textContent = "📎 " + file.name + " ✕"; input.focus(); };
    reader.readAsDataURL(file);
  });`;
