import { withTimeout } from "../core/with-timeout.ts";

/**
 * A PDF's text, through Workers AI's Markdown Conversion (`env.AI.toMarkdown`, the Worker's `AI`
 * binding; PDF conversion is not billed as model use). The text is cut at `maxChars` with a
 * marker, and a PDF whose pages hold no text (a scan, a picture) says so: the model that reads
 * PDFs natively (Anthropic) then gets the file itself (document-request.ts), any other one a line.
 * Embedded images are not converted (that would call an image model per picture).
 */

export type ReadDocumentResult = { text: string; tokens?: number } | { error: string };

/** What a page heading or an empty line of the converter's Markdown carries: no text of the page. */
const NOT_TEXT = /^(#{1,6}\s*(contents|page\s+\d+|metadata)\s*|\s*)$/i;

const NO_TEXT_ERROR = "the PDF has no text layer (scanned or image-only pages)";

export async function readDocument(args: {
  bytes: Uint8Array;
  name: string;
  env: Record<string, unknown>;
  maxChars: number;
  timeoutMs: number;
}): Promise<ReadDocumentResult> {
  const ai = args.env.AI as
    | {
        toMarkdown?: (
          files: Array<{ name: string; blob: Blob }>,
          options?: unknown,
        ) => Promise<unknown>;
      }
    | undefined;
  if (typeof ai?.toMarkdown !== "function")
    return {
      error:
        'no document reader: bind Workers AI (wrangler.toml [ai] binding = "AI") to read PDFs as text',
    };
  let answer: unknown;
  try {
    answer = await withTimeout(
      ai.toMarkdown(
        [{ name: pdfName(args.name), blob: new Blob([args.bytes], { type: "application/pdf" }) }],
        { conversionOptions: { pdf: { metadata: false } } },
      ),
      args.timeoutMs,
    );
  } catch (error) {
    return { error: `Workers AI toMarkdown failed: ${messageOf(error)}` };
  }
  const result = Array.isArray(answer) ? answer[0] : answer;
  if (!isRecord(result)) return { error: "Workers AI toMarkdown gave no result" };
  if (result.format === "error")
    return {
      error: `Workers AI could not convert it: ${String(result.error ?? "").slice(0, 200)}`,
    };
  if (typeof result.data !== "string") return { error: "Workers AI toMarkdown gave no text" };
  if (result.data.split("\n").every((line) => NOT_TEXT.test(line))) return { error: NO_TEXT_ERROR };
  const text =
    result.data.length > args.maxChars
      ? `${result.data.slice(0, args.maxChars)}\n…[document truncated: ${result.data.length - args.maxChars} more characters]`
      : result.data;
  return { text, ...(typeof result.tokens === "number" ? { tokens: result.tokens } : {}) };
}

/**
 * The conversion picks its reader by the file's extension as well as its type, and a channel's
 * name for a file can carry a suffix ("q3.pdf (Slack file F1)"): the name sent always ends ".pdf".
 */
function pdfName(name: string): string {
  return /\.pdf$/i.test(name) ? name : `${name}.pdf`;
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 200);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
