/** Where text goes: a process's stderr, say. */
export interface TextOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** Outputs holding text not yet written; every one is flushed when the process exits. */
const holding = new Set<TurnBatchedOutput>();
let exitHooked = false;
/** The process is exiting: no later turn will come, so every write goes out at once. */
let exiting = false;

/**
 * An output whose writes of one turn of the event loop leave in ONE write to `out`, at that turn's
 * check phase (`setImmediate`): the access lines of the requests a busy server finishes in a turn
 * are one system call instead of one each, and none waits longer than the turn. Whatever is held
 * when the process exits (`process.exit` after a fatal line, a drained shutdown) is written then,
 * synchronously as stderr to a file or pipe is on Linux, and so is anything written after that.
 */
export class TurnBatchedOutput implements TextOutput {
  readonly #out: TextOutput;
  readonly #held: string[] = [];
  readonly isTTY: boolean | undefined;

  constructor(out: TextOutput) {
    this.#out = out;
    this.isTTY = out.isTTY;
  }

  write(text: string): void {
    if (exiting) {
      this.#out.write(text);
      return;
    }
    this.#held.push(text);
    if (this.#held.length > 1) return;
    holding.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.once('exit', () => {
        exiting = true;
        for (const output of holding) output.flush();
      });
    }
    setImmediate(() => this.flush());
  }

  /** Writes what is held now, in one write; then calls `done` (pino's `logger.flush(cb)` passes one). */
  flush(done?: () => void): void {
    if (this.#held.length > 0) {
      const text = this.#held.length === 1 ? this.#held[0]! : this.#held.join('');
      this.#held.length = 0;
      holding.delete(this);
      this.#out.write(text);
    }
    done?.();
  }
}
