import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash } from "node:crypto";
import { json, parseMultipart } from "../../../../scripts/simulate/fakes/kit.ts";
import { streamBytes } from "../../../../scripts/simulate/fakes/stream-bytes.ts";
import type { SlackFakeState } from "./slack-state.ts";

/**
 * The fake Slack's file traffic outside the Web API: the pre-signed upload URLs
 * files.getUploadURLExternal hands out (`POST /upload/v1/<file id>`) and the url_private
 * downloads under /files/.
 */

/** A pre-signed upload URL's path; group 1 is the file id. */
export const UPLOAD_PATH = /^\/upload\/v1\/(F\w+)$/;

/** POST /upload/v1/<file id>: the bytes must be as long as getUploadURLExternal was told. */
export async function receiveUpload(
  state: SlackFakeState,
  req: IncomingMessage,
  res: ServerResponse,
  uploadTo: RegExpExecArray,
  raw: Buffer,
) {
  // The pre-signed URL files.getUploadURLExternal gave: raw bytes or a multipart `file`; no token.
  const pending = state.uploads.get(uploadTo[1]!);
  const form = await parseMultipart(req.headers["content-type"], raw);
  const bytes = form ? form.files[0]?.bytes : raw;
  state.calls.push({
    method: "files.upload_url",
    args: { fileId: uploadTo[1], bytes: bytes?.byteLength ?? 0 },
    token: req.headers.authorization ? "sent" : "",
    at: Date.now(),
  });
  if (!pending || !bytes) return json(res, 404, { ok: false, error: "invalid_upload" });
  if (bytes.byteLength !== pending.length) {
    res.writeHead(400, { "content-type": "text/plain" });
    return res.end("length mismatch");
  }
  pending.sha256 = createHash("sha256").update(bytes).digest("hex");
  res.writeHead(200, { "content-type": "text/plain" });
  return res.end(`OK - ${bytes.byteLength}`);
}

/** GET /files/…: a url_private download of what `/_control/file` placed there. */
export function serveDownload(
  state: SlackFakeState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) {
  // url_private downloads: Bearer bot token required; without it Slack serves its sign-in page.
  const auth = String(req.headers.authorization ?? "");
  state.calls.push({
    method: "files.download",
    args: { path: url.pathname },
    token: auth ? `…${auth.slice(-4)}` : "",
    at: Date.now(),
  });
  const file = state.files.get(url.pathname);
  if (!auth.startsWith("Bearer xox")) {
    res.writeHead(200, { "content-type": "text/html" });
    return res.end("<html>Sign in to Slack</html>");
  }
  if (!file) return json(res, 404, { ok: false, error: "file_not_found" });
  if (file.redirectTo) {
    res.writeHead(302, { location: file.redirectTo });
    return res.end();
  }
  if (file.bytes !== undefined) {
    // The download's call records how many bytes left (`args.sentBytes`).
    const call = state.calls[state.calls.length - 1]!;
    return streamBytes(res, { ...file, bytes: file.bytes }, (sent) => {
      call.args.sentBytes = sent;
    });
  }
  res.writeHead(200, { "content-type": file.contentType });
  return res.end(
    file.contentBase64 !== undefined ? Buffer.from(file.contentBase64, "base64") : file.content,
  );
}
