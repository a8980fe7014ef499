import { CompiledQuery } from 'kysely';

/*
 * What `ImmediateSqliteDriver` keeps besides its flags: the open commit group, the lock on its one
 * connection, and the statements that open, mark, end and commit a group's transactions.
 */

/** Transactions that share one COMMIT, and the promise their callers wait on. */
export class CommitGroup {
  members = 0;
  /** Its turn to commit came while a transaction ran: that transaction commits it as it ends. */
  due = false;
  readonly committed: Promise<void>;
  resolve!: () => void;
  reject!: (error: unknown) => void;

  constructor() {
    this.committed = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Transactions nobody waits on (kysely used directly) must not make a failed commit unhandled;
    // whoever awaits `committed` still sees the rejection.
    this.committed.catch(() => {});
  }
}

/** The one connection, one holder at a time, in the order they asked. */
export class ConnectionMutex {
  #held: Promise<void> | null = null;
  #unlock: (() => void) | null = null;

  async lock(): Promise<void> {
    while (!this.tryLock()) await this.#held;
  }

  /** Takes the lock now if nobody holds it; false (and nothing taken) otherwise. */
  tryLock(): boolean {
    if (this.#held) return false;
    this.#held = new Promise<void>((resolve) => {
      this.#unlock = resolve;
    });
    return true;
  }

  unlock(): void {
    const unlock = this.#unlock;
    this.#held = null;
    this.#unlock = null;
    unlock?.();
  }
}

export const BEGIN_IMMEDIATE = CompiledQuery.raw('begin immediate');
export const COMMIT = CompiledQuery.raw('commit');
export const ROLLBACK = CompiledQuery.raw('rollback');
/** The driver's own statements that go through the connection (a group's opening and its end). */
export const CONTROL: ReadonlySet<CompiledQuery> = new Set([BEGIN_IMMEDIATE, COMMIT, ROLLBACK]);
/** A transaction of the group: run on better-sqlite3 directly, with no parameters. */
export const SAVEPOINT = 'savepoint tollgate_tx';
export const RELEASE = 'release tollgate_tx';
export const ROLLBACK_TO = 'rollback to tollgate_tx';
