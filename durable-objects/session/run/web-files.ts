import type { OutboundFileRef } from "../../../functions/media/outbound.ts";
import { mediaUrlSecret, signMediaPath } from "../../../functions/media/signed-url.ts";
import type { WebMedia } from "../../session-api.ts";
import type { SessionState } from "../state.ts";

/**
 * The web chat's files: it has no upload API to send them to, so an answer's files (its `MEDIA:`
 * lines, its voice reply) are staged in the media store like any channel's, kept beside the
 * transcript as a display turn (outbox/display-log.ts), and shown by the page from signed links
 * to this Worker's media route. The links are signed when they are handed out (a finished run, a
 * history read), never stored, so a reloaded page always gets links that work for a day.
 */
export const WEB_CHAT_CHANNEL = "webchat";
/** The largest file the web chat is given (a page loads it whole). */
export const WEB_FILE_MAX_BYTES = 20 * 1024 * 1024;
const WEB_LINK_TTL_SECONDS = 24 * 60 * 60;

/** Signed same-origin links to `files`, or none when the deployment has no secret to sign with. */
export async function webMediaLinks(
  s: SessionState,
  files: Array<Pick<OutboundFileRef, "ref" | "name" | "mimeType">>,
): Promise<WebMedia[]> {
  const secret = mediaUrlSecret(s.config, s.env as unknown as Record<string, unknown>);
  if (!secret || !files.length) return [];
  return Promise.all(
    files.map(async (file) => ({
      url: await signMediaPath(secret, file, WEB_LINK_TTL_SECONDS),
      name: file.name,
      mimeType: file.mimeType,
    })),
  );
}
