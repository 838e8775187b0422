/**
 * Splits a markdown note into overlapping chunks for the index, by lines, so every hit can name the
 * line range it came from (memory_get reads that window). Sizes are in tokens estimated as four
 * characters each, the estimate OpenClaw's chunker uses without a tokenizer: a chunk holds about
 * `tokens` tokens, and the next one starts with the last ~`overlap` tokens of it. A line longer than
 * a whole chunk is split into pieces that keep its line number.
 */

export interface ChunkingOptions {
  tokens: number;
  overlap: number;
}

export interface MemoryChunk {
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  text: string;
}

const CHARS_PER_TOKEN = 4;

interface Piece {
  line: number;
  text: string;
}

export function chunkMarkdown(content: string, options: ChunkingOptions): MemoryChunk[] {
  const maxChars = Math.max(CHARS_PER_TOKEN * 8, options.tokens * CHARS_PER_TOKEN);
  const overlapChars = Math.min(maxChars - 1, Math.max(0, options.overlap * CHARS_PER_TOKEN));
  const pieces: Piece[] = [];
  content.split("\n").forEach((text, index) => {
    if (text.length <= maxChars) pieces.push({ line: index + 1, text });
    else
      for (let at = 0; at < text.length; at += maxChars)
        pieces.push({ line: index + 1, text: text.slice(at, at + maxChars) });
  });

  const chunks: MemoryChunk[] = [];
  let start = 0;
  while (start < pieces.length) {
    let end = start;
    let chars = 0;
    while (
      end < pieces.length &&
      (end === start || chars + pieces[end]!.text.length + 1 <= maxChars)
    ) {
      chars += pieces[end]!.text.length + 1;
      end++;
    }
    const slice = pieces.slice(start, end);
    // Blank lines at the end of a chunk are not part of what a hit points to.
    while (slice.length > 1 && slice[slice.length - 1]!.text.trim() === "") slice.pop();
    const text = slice.map((piece) => piece.text).join("\n");
    if (text.trim() !== "")
      chunks.push({ startLine: slice[0]!.line, endLine: slice[slice.length - 1]!.line, text });
    if (end >= pieces.length) break;
    // The next chunk repeats the tail of this one (about `overlap` tokens), and always moves forward.
    let next = end;
    let carried = 0;
    while (next - 1 > start && carried + pieces[next - 1]!.text.length + 1 <= overlapChars) {
      next--;
      carried += pieces[next]!.text.length + 1;
    }
    start = next;
  }
  return chunks;
}
