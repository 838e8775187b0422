import { PermanentError } from "../../core/errors.ts";

/**
 * OpenClaw's (Codex's) patch format, parsed into file operations before anything is touched:
 *
 *   *** Begin Patch
 *   *** Add File: path        every following line starts with "+"
 *   *** Update File: path     optionally "*** Move to: new/path", then hunks
 *   @@ optional context       a hunk: " " context, "-" removed, "+" added lines
 *   *** End of File           the hunk before it must match at the end of the file
 *   *** Delete File: path
 *   *** End Patch
 *
 * A malformed patch is refused as a whole with the line number that broke it, so a bad patch never
 * changes anything (apply.ts applies all operations or none).
 */

export interface PatchHunk {
  /** Text after "@@": a line the hunk's position is searched after (narrows repeated code). */
  context: string;
  /** The lines the hunk expects (context and removed), in order. */
  oldLines: string[];
  /** What they become (context and added). */
  newLines: string[];
  /** "*** End of File" followed it: match at the end of the file. */
  atEnd: boolean;
}

export type PatchOperation =
  | { kind: "add"; path: string; content: string }
  | { kind: "delete"; path: string }
  | { kind: "update"; path: string; moveTo?: string; hunks: PatchHunk[] };

/** The patch text is not in the format: the model must write it again. */
export class PatchFormatError extends PermanentError {}

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const END_OF_FILE = "*** End of File";

export function parsePatch(input: string): PatchOperation[] {
  const lines = input.replace(/\r\n/g, "\n").trim().split("\n");
  if (lines[0]?.trim() !== BEGIN)
    throw new PatchFormatError(`the patch must start with "${BEGIN}"`);
  if (lines.at(-1)?.trim() !== END) throw new PatchFormatError(`the patch must end with "${END}"`);
  const body = lines.slice(1, -1);
  const operations: PatchOperation[] = [];
  let at = 0;
  const fail = (message: string): never => {
    throw new PatchFormatError(`line ${at + 2}: ${message}`);
  };
  const isHeader = (line: string) => line.startsWith("*** ") && line !== END_OF_FILE;

  while (at < body.length) {
    const line = body[at]!;
    if (line.startsWith(ADD)) {
      const path = pathOf(line, ADD, fail);
      at++;
      const content: string[] = [];
      while (at < body.length && !isHeader(body[at]!)) {
        const text = body[at]!;
        if (!text.startsWith("+")) fail(`a line of an added file must start with "+"`);
        content.push(text.slice(1));
        at++;
      }
      operations.push({
        kind: "add",
        path,
        content: content.length ? `${content.join("\n")}\n` : "",
      });
    } else if (line.startsWith(DELETE)) {
      operations.push({ kind: "delete", path: pathOf(line, DELETE, fail) });
      at++;
    } else if (line.startsWith(UPDATE)) {
      const path = pathOf(line, UPDATE, fail);
      at++;
      let moveTo: string | undefined;
      if (body[at]?.startsWith(MOVE)) {
        moveTo = pathOf(body[at]!, MOVE, fail);
        at++;
      }
      const hunks: PatchHunk[] = [];
      while (at < body.length && !isHeader(body[at]!)) {
        const hunk: PatchHunk = { context: "", oldLines: [], newLines: [], atEnd: false };
        if (body[at]!.startsWith("@@")) {
          hunk.context = body[at]!.slice(2).trim();
          at++;
        } else if (hunks.length > 0) {
          fail(`expected "@@" to start the next hunk`);
        }
        let changed = false;
        while (at < body.length && !isHeader(body[at]!) && !body[at]!.startsWith("@@")) {
          const text = body[at]!;
          if (text === END_OF_FILE) {
            hunk.atEnd = true;
            at++;
            break;
          }
          const sign = text[0];
          const rest = text.slice(1);
          // An empty line inside a hunk is an empty context line (editors strip the lone space).
          if (text === "" || sign === " ") {
            hunk.oldLines.push(rest);
            hunk.newLines.push(rest);
          } else if (sign === "-") {
            hunk.oldLines.push(rest);
            changed = true;
          } else if (sign === "+") {
            hunk.newLines.push(rest);
            changed = true;
          } else {
            fail(`a hunk line must start with " ", "-" or "+", got ${JSON.stringify(text)}`);
          }
          at++;
        }
        if (!changed && !hunk.context) fail(`a hunk of ${path} changes nothing`);
        hunks.push(hunk);
      }
      if (!hunks.length && !moveTo) fail(`"${UPDATE}${path}" has no hunks`);
      operations.push({ kind: "update", path, ...(moveTo ? { moveTo } : {}), hunks });
    } else if (line.trim() === "") {
      at++;
    } else {
      fail(
        `expected a file header (Add File, Update File, Delete File), got ${JSON.stringify(line)}`,
      );
    }
  }
  if (!operations.length) throw new PatchFormatError("the patch contains no file operations");
  return operations;
}

function pathOf(line: string, prefix: string, fail: (message: string) => never): string {
  const path = line.slice(prefix.length).trim();
  if (!path) fail(`"${prefix.trim()}" needs a path`);
  return path;
}
