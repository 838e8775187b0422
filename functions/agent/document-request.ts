import { toBase64, type MediaPart } from "../media/parts.ts";
import type { LoadMedia } from "./media-request.ts";
import type { Message } from "./types.ts";
import { sanitizeLabel } from "./untrusted-text.ts";

/**
 * The PDFs of a request, for the one model about to be called. A PDF whose text was read at
 * triage (read-document.ts) is already in the turn as fenced text, for every model: text costs a
 * fraction of a PDF's page images. A PDF with no text (a scan, no Workers AI binding, a failed
 * conversion) goes as the file itself to a model that reads PDFs natively — Anthropic's Messages
 * API, as in OpenClaw's `pdf` tool — for the last DOCUMENT_TURNS_KEPT user turns that have one;
 * any other model reads the line the turn already carries about why there is no text.
 */

export const DOCUMENT_TURNS_KEPT = 3;
export const DOCUMENT_REMOVED_NOTE = "[document data removed - already processed by model]";
export const DOCUMENT_STRIPPED_NOTICE =
  "The model refused the document(s) in this conversation, so I answered without them.";

export interface PreparedDocuments {
  messages: Message[];
  documentCount: number;
  heldBytes: number;
}

export async function prepareDocuments(
  messages: Message[],
  options: {
    readsPdf: boolean;
    load?: LoadMedia;
    /** The provider refused this request's documents once: name them, send no file. */
    refused?: boolean;
  },
): Promise<PreparedDocuments> {
  if (!options.readsPdf || !options.load || !messages.some(hasUnreadPdf))
    return { messages, documentCount: 0, heldBytes: 0 };
  const recent = new Set<number>();
  for (let i = messages.length - 1; i >= 0 && recent.size < DOCUMENT_TURNS_KEPT; i--)
    if (hasUnreadPdf(messages[i]!)) recent.add(i);
  let documentCount = 0;
  let heldBytes = 0;
  const out: Message[] = [];
  for (const [index, message] of messages.entries()) {
    if (message.role !== "user" || !hasUnreadPdf(message)) {
      out.push(message);
      continue;
    }
    const notes: string[] = [];
    const documents: NonNullable<Extract<Message, { role: "user" }>["documents"]> = [];
    for (const part of message.media!.filter(isUnreadPdf)) {
      const name = `"${sanitizeLabel(part.name ?? "document.pdf", 120)}"`;
      if (!recent.has(index)) notes.push(DOCUMENT_REMOVED_NOTE);
      else if (options.refused) notes.push(`[document ${name} not shown: the model refused it]`);
      else {
        const bytes = await options.load(part.ref).catch(() => undefined);
        if (!bytes) notes.push(`[document ${name} is no longer stored]`);
        else {
          documents.push({
            mimeType: "application/pdf",
            data: toBase64(bytes),
            ...(part.name ? { name: sanitizeLabel(part.name, 120) } : {}),
          });
          notes.push(`[document ${name}: the PDF itself is attached below]`);
          documentCount++;
          heldBytes += bytes.byteLength;
        }
      }
    }
    out.push({
      ...message,
      content: `${message.content}\n${notes.join("\n")}`,
      ...(documents.length ? { documents } : {}),
    });
  }
  return { messages: out, documentCount, heldBytes };
}

export function requestHasDocuments(messages: Message[]): boolean {
  return messages.some((message) => message.role === "user" && !!message.documents?.length);
}

/** A provider's 400 that is about a PDF (too many pages, too large, unreadable, encrypted). */
export function isDocumentRefusal(message: string): boolean {
  return /\bdocument|pdf|page/i.test(message);
}

function isUnreadPdf(part: MediaPart): boolean {
  return part.kind === "document" && part.text === undefined && part.mimeType === "application/pdf";
}

function hasUnreadPdf(message: Message): boolean {
  return message.role === "user" && !!message.media?.some(isUnreadPdf);
}
