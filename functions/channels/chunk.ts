/**
 * Splits a reply into chunks no longer than `limit` characters without breaking fenced code
 * blocks: a fence cut in two is closed at the end of one chunk and reopened (same info string) at
 * the start of the next. `newline` mode prefers paragraph breaks, then line breaks; `length` mode
 * fills each chunk and only then looks back for a line break or space.
 */
export type ChunkMode = "length" | "newline";

export function chunkText(text: string, limit: number, mode: ChunkMode = "length"): string[] {
  if (limit < 16) throw new RangeError("chunk limit must be at least 16 characters");
  const chunks: string[] = [];
  let rest = text.trim();
  let reopenFence = "";
  while (rest.length > 0) {
    const budget = limit - reopenFence.length;
    let piece: string;
    if (reopenFence.length + rest.length <= limit) {
      piece = rest;
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
