/**
 * Splits a reply into chunks no longer than `limit` characters without breaking fenced code
 * blocks: a fence cut in two is closed at the end of one chunk and reopened (same info string) at
 * the start of the next. `newline` mode prefers paragraph breaks, then line breaks; `length` mode
 * fills each chunk and only then looks back for a line break or space.
 */
export type ChunkMode = "length" | "newline";

export function chunkText(
  text: string,
  limit: number,
  mode: ChunkMode = "length",
  maxLines?: number,
): string[] {
  if (limit < 16) throw new RangeError("chunk limit must be at least 16 characters");
  const chunks: string[] = [];
  let rest = text.trim();
  let reopenFence = "";
  while (rest.length > 0) {
    // `maxLines` (Discord's maxLinesPerMessage): a chunk also ends after that many lines, counting
    // a reopened fence line; the cut then falls on the line break itself.
    const lineBudget = maxLines
      ? nthNewline(rest, Math.max(1, maxLines - (reopenFence ? 1 : 0)))
      : -1;
    const budget = Math.min(
      limit - reopenFence.length,
      lineBudget >= 0 ? lineBudget + 5 : Infinity,
    );
    let piece: string;
    if (reopenFence.length + rest.length <= limit && lineBudget < 0) {
      piece = rest;
    } else if (lineBudget >= 0 && lineBudget + 1 <= limit - reopenFence.length - 4) {
      piece = rest.slice(0, lineBudget + 1);
    } else {
      piece = rest.slice(0, cutPoint(rest, budget - 4, mode));
    }
    rest = rest.slice(piece.length).replace(/^\n+/, "");
    let chunk = reopenFence + piece;
    const open = openFence(chunk);
    if (open !== null && rest.length > 0) {
      chunk = `${chunk.replace(/\n*$/, "")}\n\`\`\``;
      reopenFence = `${open}\n`;
    } else {
      reopenFence = "";
    }
    chunks.push(chunk.trimEnd());
  }
  return chunks.length ? chunks : [""];
}

/** Index of the `n`-th line break of `text` (the end of its n-th line), or -1 when it has no more than n lines. */
function nthNewline(text: string, n: number): number {
  let at = -1;
  for (let seen = 0; seen < n; seen++) {
    at = text.indexOf("\n", at + 1);
    if (at < 0) return -1;
  }
  return at;
}

function cutPoint(text: string, budget: number, mode: ChunkMode): number {
  const window = text.slice(0, budget);
  const minimum = Math.floor(budget * (mode === "newline" ? 0.3 : 0.6));
  const candidates = mode === "newline" ? ["\n\n", "\n", " "] : ["\n", " "];
  for (const separator of candidates) {
    const at = window.lastIndexOf(separator);
    if (at >= minimum) return at + separator.length;
  }
  return budget;
}

/** The opening fence line (``` plus info string) if `text` ends inside a fenced block, else null. */
function openFence(text: string): string | null {
  let open: string | null = null;
  for (const line of text.split("\n")) {
    const match = /^\s*(```+|~~~+)(.*)$/.exec(line);
    if (!match) continue;
    if (open === null) open = `${match[1]}${match[2]!.trim()}`;
    else if (line.trim().startsWith(open.replace(/[^`~].*$/, ""))) open = null;
  }
  return open;
}
