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
