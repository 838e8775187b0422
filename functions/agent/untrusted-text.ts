/**
 * Fences for third-party text: web pages, chat messages from channel senders, group history,
 * display names, attachment bodies, system events. Every such piece enters the prompt between a
 * start and an end marker carrying a random id chosen after the text was fixed, so the text can
 * neither end its own fence nor open one that passes for another source. Inside, look-alikes of
 * the prompt's own structure are neutralised: model special tokens and fence markers are removed,
 * and lines that would pass for a structural line (a `System:` event line, a `Name (U123): ` sender
 * line, `[End of attachment]`, the history headers) are quoted with `> `.
 */

/** Tokens some model families treat as role switches; they never belong in quoted text. */
const SPECIAL_TOKENS =
  /<\|(?:im_start|im_end|im_sep|endoftext|start_header_id|end_header_id|eot_id|begin_of_text|system|user|assistant)\|>/gi;
/** Any start or end marker of a fence, whatever its id (and spacing or case variants of it). */
const FENCE_MARKER = /<<<\s*(?:END_)?EXTERNAL_UNTRUSTED_CONTENT\b[^>]*>>>/gi;
/** Lines that mimic the prompt's structure: event lines, bracketed headers and sender lines. */
const STRUCTURAL_LINE = [
  /^\s*system\s*:/i,
  /^\s*\[\s*(?:end of attachment|attachment\b|chat messages since|current message|queue overflow)/i,
  /^(?!>)[^\n()]{1,100} \([^()\s]{1,64}\):(?:\s|$)/,
];

/** A fresh fence id: 64 random bits, unguessable by the text it fences. */
export function newFenceId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Line breaks a model may honour besides "\n": a structural line must not hide behind them. */
const OTHER_LINE_BREAKS = /\r\n?|[\u0085\u2028\u2029]/g;

/**
 * Removes special tokens and fence markers until none is left: one pass is not enough, because
 * removing a marker glues the text around it together (`<|im_<|im_end|>start|>` → `<|im_start|>`).
 * Each further pass only runs when the last one removed something, so this ends.
 */
function stripMarkers(text: string): string {
  let current = text;
  for (;;) {
    const next = current.replace(SPECIAL_TOKENS, "").replace(FENCE_MARKER, "");
    if (next === current) return current;
    current = next;
  }
}

/** Removes special tokens and fence markers; quotes lines that could pass for prompt structure. */
export function sanitizeUntrusted(text: string): string {
  return stripMarkers(text)
    .replace(OTHER_LINE_BREAKS, "\n")
    .split("\n")
    .map((line) => (STRUCTURAL_LINE.some((pattern) => pattern.test(line)) ? `> ${line}` : line))
    .join("\n");
}

/** A label (display name, file name, source) reduced to one bounded line without markup. */
export function sanitizeLabel(text: string, maxChars = 120): string {
  const line = stripMarkers(text)
    .replace(/[\s\u0085\u2028\u2029]+/g, " ")
    .replace(/[<>[\]]/g, "")
    .trim();
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line;
}

/**
 * Fences `text` as untrusted content from `source`. The caller passes the fence id of the turn it
 * is composing (see newFenceId); the same id may fence several pieces of one turn.
 */
export function fenceUntrusted(text: string, source: string, id: string): string {
  return fenceBlock(sanitizeUntrusted(text), source, id);
}

/** The fence itself, for text the caller has already made safe (sanitizeUntrusted / sanitizeLabel per line). */
export function fenceBlock(safeText: string, source: string, id: string): string {
  return [
    `<<<EXTERNAL_UNTRUSTED_CONTENT id="${id}">>>`,
    `Source: ${sanitizeLabel(source, 300)}`,
    "---",
    safeText,
    `<<<END_EXTERNAL_UNTRUSTED_CONTENT id="${id}">>>`,
  ].join("\n");
}

const FENCED =
  /<<<EXTERNAL_UNTRUSTED_CONTENT id="([0-9a-f]+)">>>\nSource: [^\n]*\n---\n([\s\S]*?)\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="\1">>>/g;

/** For people reading a transcript (web chat history): the fenced text without the fence lines. */
export function unfenceForDisplay(text: string): string {
  return text.replace(FENCED, (_match, _id: string, inner: string) => inner);
}
