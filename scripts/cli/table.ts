/** A plain aligned table for people (scripts use --json). */
export function renderTable(
  headers: string[],
  rows: Array<Array<string | number | null | undefined>>,
): string {
  if (rows.length === 0) return "(none)";
  const cells = rows.map((row) =>
    row.map((cell) => (cell === null || cell === undefined ? "-" : String(cell))),
  );
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...cells.map((row) => row[i]!.length)),
  );
  const line = (row: string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}
