/** Where a CLI run reads its environment and writes its output; `process` in production, plain objects in tests. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
  cwd: string;
  /**
   * `serve` runs until this resolves (with the reason, e.g. the signal name). Default: the first
   * SIGTERM or SIGINT.
   */
  waitForShutdown?: () => Promise<string>;
}

/** Prints one JSON object (for `--json`) or one human line on stdout. */
export function printResult(io: CliIo, json: boolean, object: Record<string, unknown>, human: string): void {
  io.stdout.write(json ? `${JSON.stringify(object)}\n` : `${human}\n`);
}

/** Rows as left-aligned columns, two spaces apart (the first row is the header). */
export function formatTable(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows
    .map(
      (row) =>
        `${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')}\n`,
    )
    .join('');
}
