import type { AttachmentText } from "../channels/attachments.ts";
import type { ChatType } from "../core/envelope.ts";
import type { MediaPart } from "../media/parts.ts";
import { CURRENT_MESSAGE_HEADER, HISTORY_CONTEXT_HEADER } from "../routing/group-history.ts";
import {
  fenceBlock,
  fenceUntrusted,
  newFenceId,
  sanitizeLabel,
  sanitizeUntrusted,
} from "./untrusted-text.ts";

/**
 * The user turn of a run, composed from what the session kept for it: queued system events, the
 * queue-overflow summary, un-mentioned group history and the triggering message(s). Every piece a
 * third party wrote (message text, display names, file names and bodies, event details) sits in a
 * fence whose id is drawn once per composed turn, after all of that text was fixed; the lines
 * between fences are the gateway's own. Text from the operator (web chat, API) is not fenced.
 */

/** One incoming message as triage prepared it. */
export interface IncomingText {
  /** The message text, directives and inline shortcuts removed. */
  text: string;
  /** The channel sender who wrote it; absent for the operator (web chat, API). */
  from?: { channel: string; chatType: ChatType; label: string };
  attachments?: AttachmentText[];
}

export interface TurnParts {
  messages: IncomingText[];
  groupHistory?: Array<{ sender: string; text: string }>;
  droppedSummary?: string[];
  systemEvents?: Array<{ text: string }>;
}

export function composeTurnText(parts: TurnParts, fenceId = newFenceId()): string {
  const blocks: string[] = [];
  if (parts.systemEvents?.length) {
    const lines = parts.systemEvents.map((event) => `System: ${sanitizeLabel(event.text, 4000)}`);
    blocks.push(
      fenceBlock(
        lines.join("\n"),
        "channel system events (notes for context; nobody asked anything)",
        fenceId,
      ),
    );
  }
  if (parts.droppedSummary?.length) {
    const lines = parts.droppedSummary.map((line) => `- ${sanitizeLabel(line, 400)}`);
    blocks.push(
      `[Queue overflow: ${parts.droppedSummary.length} earlier message(s) were dropped]\n${fenceBlock(lines.join("\n"), "the dropped messages, shortened", fenceId)}`,
    );
  }
  const current = parts.messages.map((message) => renderIncoming(message, fenceId)).join("\n\n");
  if (parts.groupHistory?.length) {
    blocks.push(`${HISTORY_CONTEXT_HEADER}\n${renderHistory(parts.groupHistory, fenceId)}`);
    blocks.push(`${CURRENT_MESSAGE_HEADER}\n${current}`);
  } else {
    blocks.push(current);
  }
  return blocks.join("\n\n");
}

/** One message: fenced when a channel sender wrote it, each attachment body fenced on its own. */
export function renderIncoming(message: IncomingText, fenceId: string): string {
  const blocks: string[] = [];
  const author = message.from ? sanitizeLabel(message.from.label) : "the user";
  if (!message.from) {
    if (message.text) blocks.push(message.text);
  } else if (message.text || !message.attachments?.length) {
    blocks.push(
      fenceUntrusted(
        message.text,
        `${message.from.channel} ${chatTypeWord(message.from.chatType)} from ${author}`,
        fenceId,
      ),
    );
  }
  for (const attachment of message.attachments ?? []) {
    const label = sanitizeLabel(attachment.label);
    if (attachment.media)
      blocks.push(renderMedia(attachment.media, label, author, fenceId, attachment.note));
    else if (attachment.body !== undefined)
      blocks.push(
        fenceUntrusted(attachment.body, `attachment "${label}" sent by ${author}`, fenceId),
      );
    else blocks.push(`[Attachment: ${label} — ${sanitizeLabel(attachment.note ?? "no contents")}]`);
  }
  return blocks.join("\n\n");
}

/**
 * A media attachment: an image is named here and attached to the turn as pixels (or described,
 * for a model without image input); a transcript or a document's text is fenced as the sender's.
 */
function renderMedia(
  media: MediaPart,
  label: string,
  author: string,
  fenceId: string,
  note: string | undefined,
): string {
  if (media.kind === "audio" && media.transcript !== undefined)
    return fenceUntrusted(
      media.transcript,
      `transcript of the voice message "${label}" sent by ${author} (machine-generated)`,
      fenceId,
    );
  if (media.kind === "document" && media.text !== undefined)
    return fenceUntrusted(media.text, `text of the document "${label}" sent by ${author}`, fenceId);
  if (media.kind === "image") return `[Image: ${label} — attached below, sent by ${author}]`;
  if (media.kind === "audio")
    return `[Voice message: ${label} — ${sanitizeLabel(note ?? "not transcribed", 400)}]`;
  if (media.kind === "document")
    return `[Document: ${label}, sent by ${author} — ${sanitizeLabel(note ?? "text not read", 400)}]`;
  return `[Attachment: ${label} — kept, contents not read]`;
}

/**
 * Group history in one fence: each entry starts a line with `- Name (id): `, and every line of an
 * entry's text is indented, so no text can start an entry of its own.
 */
function renderHistory(entries: Array<{ sender: string; text: string }>, fenceId: string): string {
  const lines = entries.map((entry) => {
    const [first = "", ...rest] = sanitizeUntrusted(entry.text).split("\n");
    return [`- ${sanitizeLabel(entry.sender)}: ${first}`, ...rest.map((line) => `  ${line}`)].join(
      "\n",
    );
  });
  return fenceBlock(
    lines.join("\n"),
    'chat history (messages not addressed to you; one entry per "- Name (id):" line)',
    fenceId,
  );
}

function chatTypeWord(chatType: ChatType): string {
  return chatType === "direct"
    ? "direct message"
    : chatType === "group"
      ? "group message"
      : "channel message";
}
