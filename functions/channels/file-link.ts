import type { OutboundFileMessage, OutboundMessage, SendContext } from "./adapter.ts";
import { mediaUrlUnavailable, signMediaUrl } from "../media/signed-url.ts";
import type { OutboundFileRef } from "../media/outbound.ts";

/**
 * A file sent as a message that links to it, for the platforms whose file upload a bot cannot use
 * as the deployment signs in: Google Chat (attachments upload only with user authentication; the
 * app signs in as its service account) and Teams (an upload needs the file-consent card in a DM,
 * or SharePoint through Graph in a team). The message is the row's caption, then `📎 [name](link)`,
 * the link a signed one to this Worker's media route (functions/media/signed-url.ts), and it goes
 * through the channel's own text send, so it is recorded, retried and reconciled like text.
 *
 * The link's expiry counts from when the row was queued, not from the attempt, so every attempt of
 * the row sends the same text (what a text's reconcile or an idempotent re-send compares).
 */
export const FILE_LINK_TTL_SECONDS = 7 * 24 * 60 * 60;

export function fileLinkRefusal(
  _file: Pick<OutboundFileRef, "mimeType">,
  ctx: Pick<SendContext<unknown>, "config" | "env">,
): string | undefined {
  return mediaUrlUnavailable(ctx.config, ctx.env);
}

/** The text message that stands for the file row (it carries no file and no preview state). */
export async function fileLinkMessage(
  message: OutboundFileMessage,
  ctx: Pick<SendContext<unknown>, "config" | "env">,
): Promise<OutboundMessage> {
  const { file, progressState: _preview, ...rest } = message;
  const url = await signMediaUrl(
    ctx.config,
    ctx.env,
    file,
    FILE_LINK_TTL_SECONDS,
    message.queuedAt ?? Date.now(),
  );
  const label = file.name.replace(/[[\]\\]/g, "_");
  return { ...rest, text: [message.text, `📎 [${label}](${url})`].filter(Boolean).join("\n\n") };
}
