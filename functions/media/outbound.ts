import { sniffMedia } from "./sniff.ts";

/**
 * Media out (issue 22 item 6): a file the agent sends. The bytes go to the media store first
 * (store.ts) and the outbox row keeps this reference only, so a Durable Object holds a file's
 * bytes for the one call that uploads it and never in its storage.
 */
export interface OutboundFileRef {
  /** The media store key of the bytes. */
  ref: string;
  /** The file name the recipient sees. */
  name: string;
  mimeType: string;
  sizeBytes: number;
  /** Send as a voice note where the platform has one (Telegram sendVoice); else an audio file. */
  voice?: boolean;
}

/**
 * OpenClaw's legacy media lines (start/openclaw "MEDIA: lines"): a final reply may name a file to
 * attach on a line of its own, `MEDIA:<path>`. Only a standalone plain line counts: a line in a
 * code fence, wrapped in Markdown (`**MEDIA:x**`, `` `MEDIA:x` ``) or inside a sentence stays text.
 * Returns the reply without those lines and the paths in order.
 */
export function takeMediaLines(text: string): { text: string; paths: string[] } {
  const paths: string[] = [];
  const kept: string[] = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const match = fenced ? null : /^MEDIA:\s*(\S(?:.*\S)?)\s*$/.exec(line);
    if (match) paths.push(match[1]!);
    else kept.push(line);
  }
  if (!paths.length) return { text, paths };
  return {
    text: kept
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim(),
    paths,
  };
}

/** The most files one reply sends (each is one upload; a runaway list must not flood a chat). */
export const MAX_FILES_PER_REPLY = 10;

/**
 * The type a recipient's client opens the file as: the bytes' own format when they have one
 * (sniff.ts), else by the name's extension for the text documents a workspace holds, else
 * application/octet-stream.
 */
export function outboundMimeType(name: string, bytes: Uint8Array): string {
  const sniffed = sniffMedia(bytes);
  if (sniffed) return sniffed.mime;
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase() ?? "";
  return TEXT_TYPES[extension] ?? "application/octet-stream";
}

const TEXT_TYPES: Record<string, string> = {
  md: "text/markdown",
  markdown: "text/markdown",
  txt: "text/plain",
  log: "text/plain",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  html: "text/html",
  xml: "application/xml",
  svg: "image/svg+xml",
};

/** The file name a path ends in (`reports/q3.md` → `q3.md`). */
export function fileNameOf(path: string): string {
  return path.split("/").filter(Boolean).at(-1) ?? "file";
}

/** The one line a chat reads for a file it did not get, so a file is never dropped in silence. */
export function fileNotSentLine(name: string, reason: string): string {
  return `📎 ${name} was not sent: ${reason}.`;
}

export function encodeFileRef(file: OutboundFileRef): string {
  return JSON.stringify(file);
}

export function decodeFileRef(raw: unknown): OutboundFileRef | null {
  if (typeof raw !== "string" || !raw) return null;
  const value = JSON.parse(raw) as OutboundFileRef;
  return value && typeof value.ref === "string" ? value : null;
}
