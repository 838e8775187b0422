import { stripVTControlCharacters } from "node:util";

/**
 * What a vitest run has said so far, read from its default reporter's output lines: the test files
 * it has reported (a file's line comes when the whole file has run: `✓ test/a.test.ts (3 tests)
 * 40ms`, `❯` with failures, `↓` skipped), whether anything failed, and whether the closing summary
 * has been printed.
 */
export class VitestSummary {
  readonly reportedFiles = new Set<string>();
  /** The summary's "Test Files" line has been printed. */
  finished = false;
  failed = false;

  read(rawLine: string): void {
    const line = stripVTControlCharacters(rawLine).trim();
    const file = /^[✓❯×↓]\s+(\S+\.test\.[cm]?[jt]s)\s+\(/.exec(line);
    if (file) {
      this.reportedFiles.add(file[1]!);
      if (!line.startsWith("✓") && !line.startsWith("↓")) this.failed = true;
    }
    if (/^(Test Files|Tests)\s/.test(line)) {
      if (line.startsWith("Test Files")) this.finished = true;
      if (/\bfailed\b/.test(line)) this.failed = true;
    }
    if (/^Errors\s+\d+/.test(line)) this.failed = true;
  }

  /** The duration line closes vitest's summary. */
  static closes(rawLine: string): boolean {
    return /^Duration\s/.test(stripVTControlCharacters(rawLine).trim());
  }
}
