import type { DirectStatements } from '@tollgate/storage-kysely';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type QueryResult,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import { whenNotBusy } from './busy-retry.js';
import {
  BEGIN_IMMEDIATE,
  COMMIT,
  CONTROL,
  CommitGroup,
  ConnectionMutex,
  RELEASE,
  ROLLBACK,
  ROLLBACK_TO,
  SAVEPOINT,
} from './commit-group.js';

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
 * **Waiting in JS.** The connection runs with `busy_timeout = 0`, and a statement that fails with
 * SQLITE_BUSY is retried after an async sleep where that is safe (`busy-retry.ts`).
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
  readonly #direct: DirectStatements;

  /** `direct`: the connection's statements run synchronously, for {@link transact}'s common case. */
  constructor(
    config: SqliteDialectConfig,
    busyTimeoutMs: number,
    inTransaction: () => boolean,
    direct: DirectStatements,
  ) {
    super(config);
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#inTransaction = inTransaction;
    this.#direct = direct;
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
    this.#direct.run(SAVEPOINT, NO_PARAMETERS);
    this.#group!.members++;
    this.#memberRunning = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    this.#releaseMember(connection);
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    this.#rollBackMember(connection);
  }

  /** `RELEASE`: the running transaction's work stays in its group. */
  #releaseMember(connection: DatabaseConnection): void {
    this.#direct.run(RELEASE, NO_PARAMETERS);
    this.#memberEnded(connection);
  }

  /** `ROLLBACK TO` and `RELEASE`: the running transaction's work is undone, the group's kept. */
  #rollBackMember(connection: DatabaseConnection): void {
    try {
      if (this.#inTransaction()) {
        this.#direct.run(ROLLBACK_TO, NO_PARAMETERS);
        this.#direct.run(RELEASE, NO_PARAMETERS);
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
   * here (kysely builds a transaction object, executors and connection providers per transaction),
   * and with nothing to wait for, the savepoint opens and ends synchronously (`#joinGroupAtOnce`).
   */
  async transact<Trx, T>(trx: Trx, work: (trx: Trx) => Promise<T>): Promise<T> {
    if (!this.#joinGroupAtOnce()) await this.#joinGroupWaiting();
    return this.#runJoined(trx, work);
  }

  /**
   * {@link transact}'s way in when something may have to be waited for: the connection, then
   * `BEGIN IMMEDIATE` when no group is open, and the savepoint; the connection let go if that fails.
   */
  async #joinGroupWaiting(): Promise<void> {
    const connection = await this.acquireConnection();
    try {
      await this.beginTransaction(connection);
    } catch (error) {
      await this.releaseConnection();
      throw error;
    }
  }

  /**
   * The common case of {@link transact}, without its awaits: nobody holds the connection and a group
   * is open with room, so the transaction takes the connection and opens its savepoint at once (a
   * group's first transaction, whose `BEGIN IMMEDIATE` may have to wait for another process, and
   * every case with something to wait for, take {@link #joinGroupWaiting}). True when it did.
   */
  #joinGroupAtOnce(): boolean {
    const group = this.#group;
    if (!this.#connection || this.#committing || !group || group.members >= MAX_GROUP) return false;
    if (!this.#inTransaction() || !this.#mutex.tryLock()) return false;
    try {
      this.#direct.run(SAVEPOINT, NO_PARAMETERS);
    } catch (error) {
      this.#mutex.unlock();
      throw error;
    }
    group.members++;
    this.#memberRunning = true;
    return true;
  }

  /** The rest of {@link transact} once its savepoint is open: the work, `RELEASE` or `ROLLBACK TO`, and the connection let go. */
  async #runJoined<Trx, T>(trx: Trx, work: (trx: Trx) => Promise<T>): Promise<T> {
    const connection = this.#connection!;
    let durable: Promise<void>;
    let value: T;
    try {
      try {
        value = await work(trx);
        durable = this.committed();
        this.#releaseMember(connection);
      } catch (error) {
        this.#rollBackMember(connection);
        throw error;
      }
    } finally {
      await this.releaseConnection();
    }
    await durable;
    return value;
  }

  /** Runs a query of the transaction {@link transact} is running, on its connection. */
  async executeInTransaction<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.#memberRunning) throw new Error('a statement of a transaction ran after its transaction ended');
    return this.#connection!.executeQuery<R>(query);
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
    const committing = whenNotBusy(connection, COMMIT, this.#busyTimeoutMs).then(
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
        return this.#group
          ? connection.executeQuery<R>(query)
          : whenNotBusy(connection, query, this.#busyTimeoutMs);
      },
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
  }
}

const COMMITTED = Promise.resolve();
const NO_PARAMETERS: readonly unknown[] = [];
