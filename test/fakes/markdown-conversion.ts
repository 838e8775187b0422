import { inflateSync } from "node:zlib";

/**
 * Workers AI's Markdown Conversion (`env.AI.toMarkdown`) for PDFs, as the fake model server
 * answers it: each page's text (the strings its content stream shows with `Tj` / `TJ`, Flate
 * streams inflated) under `### Page <n>`, after a `## Contents` heading — the shape the service
 * gives with `conversionOptions.pdf.metadata: false`. A file that is not a PDF, or is cut short
 * (no `%%EOF`), is a `format: "error"` result, as the service reports a file it cannot convert.
 * A page with no text shows its heading only, as a scanned page does.
 */

export interface ConversionInput {
  name: string;
  mimeType: string;
  /** The file, base64 (the fake binding reads the Blob it was handed). */
  data: string;
}

export type ConversionResult =
  | { id: string; name: string; mimeType: string; format: "markdown"; tokens: number; data: string }
  | { id: string; name: string; mimeType: string; format: "error"; error: string };

export function convertToMarkdown(file: ConversionInput, index: number): ConversionResult {
  const bytes = Buffer.from(file.data, "base64");
  const head = { id: `conversion-${index}`, name: file.name, mimeType: "application/pdf" };
  const text = bytes.toString("latin1");
  if (!text.startsWith("%PDF-"))
    return { ...head, mimeType: file.mimeType, format: "error", error: "Unsupported file type" };
  if (!text.trimEnd().endsWith("%%EOF"))
    return { ...head, format: "error", error: "Failed to parse PDF: unexpected end of file" };
  const pages = pageTexts(text);
  const data = [
    "## Contents",
    ...pages.flatMap((lines, i) => [`### Page ${i + 1}`, ...lines, ""]),
  ].join("\n");
  return { ...head, format: "markdown", tokens: Math.ceil(data.length / 4), data };
}

/** The text lines of each content stream, in file order (the fixtures put one page per stream). */
function pageTexts(pdf: string): string[][] {
  const pages: string[][] = [];
  const streams = /<<([\s\S]*?)>>\s*stream\r?\n([\s\S]*?)\r?\nendstream/g;
  for (const match of pdf.matchAll(streams)) {
    const [, dictionary, body] = match as unknown as [string, string, string];
    if (/\/Type\s*\/(XObject|Metadata)/.test(dictionary)) continue;
    const content = /\/FlateDecode/.test(dictionary)
      ? inflateSync(Buffer.from(body, "latin1")).toString("latin1")
      : body;
    pages.push(shownStrings(content));
  }
  return pages;
}

function shownStrings(content: string): string[] {
  const lines: string[] = [];
  for (const match of content.matchAll(/\((?:\\.|[^\\)])*\)\s*Tj|\[((?:\\.|[^\]])*)\]\s*TJ/g)) {
    const strings = [...match[0].matchAll(/\(((?:\\.|[^\\)])*)\)/g)].map((s) =>
      unescapePdfString(s[1]!),
    );
    lines.push(strings.join(""));
  }
  return lines;
}

function unescapePdfString(text: string): string {
  return text.replace(/\\([\\()nrt])/g, (_, c: string) =>
    c === "n" ? "\n" : c === "r" ? "\r" : c === "t" ? "\t" : c,
  );
}
