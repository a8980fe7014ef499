import { setTimeout as sleep } from 'node:timers/promises';
import {
  CompiledQuery,
  type DatabaseConnection,
  type QueryResult,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';

/** Most transactions one group commit holds; the next one commits the group and starts another. */
const MAX_GROUP = 256;

/**
 * kysely's SQLite driver with three changes: the write lock is taken up front, a busy lock is
 * waited for in JS, and transactions commit in groups.
 *
 * **`BEGIN IMMEDIATE`.** A plain (deferred) `BEGIN` reads first and upgrades later; two processes
 * doing that can each hold a read snapshot the other must wait out, and one of them fails with
 * SQLITE_BUSY however long the timeout.
 *
 * **Waiting in JS.** better-sqlite3 is synchronous, so SQLite's own busy handler would freeze the
 * event loop while it waits, and when the lock holder is another connection in this same process (a
 * second storage on the file, as tests and embedders do), it could then never finish. So the
 * connection runs with `busy_timeout = 0` and a statement that fails with SQLITE_BUSY is retried
 * after an async sleep of about a millisecond, with jitter, until `busyTimeoutMs` has passed. That
 * is safe exactly where SQLite says a busy statement may be retried: outside a transaction (the
 * statement did nothing; this covers `BEGIN IMMEDIATE` itself and plain reads) and for `COMMIT`
 * (the transaction stays open).
 *
 * **Group commit.** A commit is the expensive part of a small write transaction: every page it
 * touched is appended to the WAL again. So a kysely transaction is a savepoint inside a group: the
 * first one opens the group (`BEGIN IMMEDIATE`), each runs under its own `SAVEPOINT` (a failure
 * rolls back to it, undoing that transaction alone), and the group commits once, when the event
 * loop next gets to its check phase (`setImmediate`), so every transaction that started in the
 * meantime shares one commit. A transaction is only over for its caller once its group committed:
 * {@link committed}, read inside the transaction, gives the promise to await (the shared queries'
 * `write()` does), and it rejects when the group's COMMIT fails, which undoes every transaction of
 * the group; so does SQLite rolling back the whole transaction by itself (a full disk, an I/O
 * error). The group holds the write lock from its first `BEGIN` to the loop's check phase, so
 * another process writing the same file waits up to one turn of this process's event loop.
 *
 * **No dirty reads.** A statement run outside any transaction while a group is open runs inside the
 * group's transaction on the one connection, so it sees (and, if it writes, joins) what is not yet
 * committed. It answers its caller only once that group committed, and fails if the group failed:
 * nothing a process killed before its COMMIT loses was ever shown to anyone. The wait happens after
 * the connection is let go ({@link releaseConnection}), so other statements and transactions go on
 * meanwhile; that is why this driver serialises its one connection itself rather than leaving it to
 * kysely (the dialect's adapter says it supports several connections).
 */
export class ImmediateSqliteDriver extends SqliteDriver {
  readonly #busyTimeoutMs: number;
  /** Whether the connection is inside a transaction (better-sqlite3's `inTransaction`). */
  readonly #inTransaction: () => boolean;
  #connection: DatabaseConnection | undefined;
  /** The open group, from its `BEGIN IMMEDIATE` to its `COMMIT`. */
  #group: CommitGroup | null = null;
  /** A kysely transaction is between its `SAVEPOINT` and its `RELEASE` (the group must wait). */
  #memberRunning = false;
  /** A group's COMMIT that is waiting for a busy lock: nothing may begin before it is done. */
  #committing: Promise<void> | null = null;
  /** The group whose transaction is open on the connection, from its `BEGIN` until its COMMIT ended. */
  #uncommitted: CommitGroup | null = null;
  /** The group a statement run outside a transaction saw, holding its answer until it commits. */
  #seenByPlainStatement: Promise<void> | null = null;
  /** The one connection's holder, one at a time (`acquireConnection` to `releaseConnection`). */
  readonly #mutex = new ConnectionMutex();

  constructor(config: SqliteDialectConfig, busyTimeoutMs: number, inTransaction: () => boolean) {
    super(config);
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#inTransaction = inTransaction;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.#mutex.lock();
    this.#connection ??= this.#retryingWhenBusy(await super.acquireConnection());
    return this.#connection;
  }

  override async releaseConnection(): Promise<void> {
    const seen = this.#seenByPlainStatement;
    this.#seenByPlainStatement = null;
    // A no-op in kysely 0.29; kept so that a kysely whose driver locks its connection (0.28) is unlocked.
    await super.releaseConnection();
    this.#mutex.unlock();
    await seen;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#group && this.#group.members >= MAX_GROUP) await this.#commitGroup(connection);
    while (this.#committing) await this.#committing;
    if (this.#group && !this.#inTransaction()) this.#loseGroup();
    if (!this.#group) {
      await connection.executeQuery(BEGIN_IMMEDIATE);
      const group = new CommitGroup();
      this.#group = group;
      this.#uncommitted = group;
      setImmediate(() => {
        if (this.#group === group) void this.#commitGroup(connection);
      });
    }
    await connection.executeQuery(SAVEPOINT);
    this.#group.members++;
    this.#memberRunning = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(RELEASE);
    this.#memberEnded(connection);
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      if (this.#inTransaction()) {
        await connection.executeQuery(ROLLBACK_TO);
        await connection.executeQuery(RELEASE);
      } else {
        // SQLite rolled back the whole transaction itself (a full disk, an I/O error, a trigger's
        // RAISE(ROLLBACK)): every transaction of the group is gone, not just this one.
        this.#loseGroup();
      }
    } finally {
      this.#memberEnded(connection);
    }
  }

  /**
   * Runs `work` as one transaction of a commit group, as kysely's `db.transaction().execute(work)`
   * does through this driver (the connection, `SAVEPOINT`, `RELEASE` or `ROLLBACK TO`, the
   * connection let go), and resolves once its group committed. `trx` is a handle whose queries run
   * on the connection with no lock of their own ({@link executeInTransaction}): the caller holds it
   * here. kysely builds a transaction object, an executor per query and a connection provider per
   * transaction; a metered request runs two transactions of several statements each.
   */
  async transact<Trx, T>(trx: Trx, work: (trx: Trx) => Promise<T>): Promise<T> {
    const connection = await this.acquireConnection();
    let durable: Promise<void>;
    let value: T;
    try {
      let begun = false;
      try {
        await this.beginTransaction(connection);
        begun = true;
        value = await work(trx);
        durable = this.committed();
        await this.commitTransaction(connection);
      } catch (error) {
        if (begun) await this.rollbackTransaction(connection);
        throw error;
      }
    } finally {
      await this.releaseConnection();
    }
    await durable;
    return value;
  }

  /** Runs a query of the transaction {@link transact} is running, on its connection. */
  executeInTransaction<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.#memberRunning || !this.#connection) {
      return Promise.reject(new Error('a statement of a transaction ran after its transaction ended'));
    }
    return this.#connection.executeQuery<R>(query);
  }

  override async destroy(): Promise<void> {
    if (this.#group && this.#connection) await this.#commitGroup(this.#connection);
    while (this.#committing) await this.#committing;
    await super.destroy();
  }

  /**
   * The promise that settles once the transaction running now is durably committed (rejecting if
   * its group's commit failed); already resolved outside a transaction.
   */
  committed(): Promise<void> {
    return this.#memberRunning && this.#group ? this.#group.committed : COMMITTED;
  }

  /**
   * The open group's transaction no longer exists: its transactions fail (their callers were not
   * told they were done), and the next transaction opens a new group rather than running its
   * savepoint outside any transaction, where `RELEASE` would commit it on its own.
   */
  #loseGroup(): void {
    const group = this.#group;
    this.#group = null;
    if (this.#uncommitted === group) this.#uncommitted = null;
    group?.reject(new Error('SQLite rolled back the whole transaction group; none of its writes were kept'));
  }

  #memberEnded(connection: DatabaseConnection): void {
    this.#memberRunning = false;
    // The group's turn to commit came while this transaction ran: it commits now.
    if (this.#group?.due) void this.#commitGroup(connection);
  }

  /**
   * Commits the open group, or marks it due when a transaction is running (that one commits it as
   * it ends). A failed COMMIT rolls the whole group back and rejects its promise.
   */
  #commitGroup(connection: DatabaseConnection): Promise<void> {
    const group = this.#group;
    if (!group) return COMMITTED;
    if (this.#memberRunning) {
      group.due = true;
      return COMMITTED;
    }
    this.#group = null;
    const committing = this.#whenNotBusy(connection, COMMIT).then(
      () => group.resolve(),
      async (error: unknown) => {
        await connection.executeQuery(ROLLBACK).catch(() => {});
        group.reject(error);
      },
    );
    this.#committing = committing.finally(() => {
      this.#committing = null;
      if (this.#uncommitted === group) this.#uncommitted = null;
    });
    return this.#committing;
  }

  #retryingWhenBusy(connection: DatabaseConnection): DatabaseConnection {
    return {
      // Inside a group nothing can be busy in WAL mode (the group holds the write lock); should it
      // happen anyway (a database not in WAL mode), the error rolls back that transaction.
      executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
        const open = this.#uncommitted;
        if (open && !this.#memberRunning && !CONTROL.has(query)) this.#seenByPlainStatement = open.committed;
        return this.#group ? connection.executeQuery<R>(query) : this.#whenNotBusy(connection, query);
      },
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
  }

  async #whenNotBusy<R>(connection: DatabaseConnection, query: CompiledQuery): Promise<QueryResult<R>> {
    const deadline = Date.now() + this.#busyTimeoutMs;
    for (;;) {
      try {
        return await connection.executeQuery<R>(query);
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
      }
      // About a millisecond, not growing: another process's group holds the lock for a turn of its
      // event loop, so the lock frees up often, and a longer wait only idles this process (with two
      // workers, an exponential backoff to 50 ms cost a quarter of their throughput).
      await sleep(Math.min(0.5 + Math.random(), Math.max(0, deadline - Date.now())));
    }
  }
}

/** Transactions that share one COMMIT, and the promise their callers wait on. */
class CommitGroup {
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
class ConnectionMutex {
  #held: Promise<void> | null = null;
  #unlock: (() => void) | null = null;

  async lock(): Promise<void> {
    while (this.#held) await this.#held;
    this.#held = new Promise<void>((resolve) => {
      this.#unlock = resolve;
    });
  }

  unlock(): void {
    const unlock = this.#unlock;
    this.#held = null;
    this.#unlock = null;
    unlock?.();
  }
}

const COMMITTED = Promise.resolve();
const BEGIN_IMMEDIATE = CompiledQuery.raw('begin immediate');
const SAVEPOINT = CompiledQuery.raw('savepoint tollgate_tx');
const RELEASE = CompiledQuery.raw('release tollgate_tx');
const ROLLBACK_TO = CompiledQuery.raw('rollback to tollgate_tx');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');
/** The driver's own statements, which a group's members and its commit run. */
const CONTROL: ReadonlySet<CompiledQuery> = new Set([
  BEGIN_IMMEDIATE,
  SAVEPOINT,
  RELEASE,
  ROLLBACK_TO,
  COMMIT,
  ROLLBACK,
]);

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_RECOVERY, …), as better-sqlite3 reports them. */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
