import { type AuthChangeFeed, PROCESS_LOCAL_CHANNEL, type Storage, withAuthChangeFeed } from '@tollgate/core';
import { createKyselyStorage, type Database, migrateToLatest, write } from '@tollgate/storage-kysely';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { sqliteBaseline } from './sqlite-baseline.js';
import { sqliteCapabilities } from './sqlite-capabilities.js';
import { ImmediateSqliteDialect } from './sqlite-dialect.js';
import { withStatementCache } from './statement-cache.js';
import { BACKSTOP_PAGES, startWalCheckpointer } from './wal-checkpointer.js';

/** Options of {@link createSqliteStorage}. */
export interface SqliteStorageOptions {
  /** The database file (created when missing), or `':memory:'` for a private in-memory database. */
  path: string;
  /** How long a write waits for another connection's write lock before failing; default 5000. */
  busyTimeoutMs?: number;
  /** The time rows are stamped with (epoch ms); default `Date.now`. A test passes its own clock. */
  now?: () => number;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * Opens a SQLite database with better-sqlite3, brings its schema up to date and returns it as a
 * `Storage`. Safe while other processes (say the CLI next to a running server) use the same file:
 * WAL lets readers and the one writer proceed together, and every write is a transaction that takes
 * the write lock up front.
 */
export async function createSqliteStorage(options: SqliteStorageOptions): Promise<Storage & AuthChangeFeed> {
  return createSqliteStorageOn(new BetterSqlite3(options.path), options.busyTimeoutMs, options.now);
}

/**
 * {@link createSqliteStorage} on a connection the caller opened (its tests reach a `:memory:`
 * database this way, which no second connection can see). The storage owns the connection from
 * here on: `close()` closes it. Not exported from the package.
 */
export async function createSqliteStorageOn(
  database: BetterSqlite3.Database,
  busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS,
  now: () => number = Date.now,
): Promise<Storage & AuthChangeFeed> {
  try {
    // Waits for the locks of other connections while the file is set up below…
    database.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // An in-memory database has no file to share, so WAL does not apply to it.
    if (!database.memory) database.pragma('journal_mode = WAL');
    // In WAL mode NORMAL loses at most the last commits on a power cut (never corrupts), and saves
    // an fsync per commit.
    database.pragma('synchronous = NORMAL');
    // A worker thread checkpoints (see wal-checkpointer.ts); this connection only as a backstop.
    if (!database.memory) database.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    database.pragma('foreign_keys = ON');
    // Each kysely transaction runs under a SAVEPOINT inside its commit group (sqlite-driver.ts), and
    // SQLite keeps the pages a savepoint may have to roll back in a statement journal. On disk (the
    // default) that journal is a temp file opened, written and unlinked by every group: some 30
    // `pwrite` calls per metered request, each a syscall on the event loop. In memory it is a copy.
    database.pragma('temp_store = MEMORY');
    // …and from then on never inside SQLite, which would block the event loop: the driver retries
    // a busy statement after an async sleep instead (see ImmediateSqliteDriver).
    database.pragma('busy_timeout = 0');
  } catch (error) {
    database.close();
    throw error;
  }
  const statements = withStatementCache(database);
  const dialect = new ImmediateSqliteDialect({
    database: statements,
    direct: statements,
    busyTimeoutMs,
    inTransaction: () => database.inTransaction,
  });
  const db = new Kysely<Database>({ dialect });
  const committed = () => dialect.committed();
  try {
    // In one write transaction: a second process migrating at the same moment waits for it, then
    // finds the migrations done.
    await write({ db, dialect: sqliteCapabilities, now, committed }, (trx) =>
      migrateToLatest(trx, sqliteCapabilities, sqliteBaseline),
    );
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const kysely = createKyselyStorage(db, sqliteCapabilities, {
    now,
    committed,
    // Writes run as savepoints of the commit group with one reused kysely `Transaction`, whose
    // prepared queries go straight to better-sqlite3 (the request path's reserve and settle).
    transact: (work) => dialect.transact(work),
  });
  const checkpointer = database.memory ? null : startWalCheckpointer(database.name);
  const storage: Storage = checkpointer
    ? {
        ...kysely,
        async close() {
          await kysely.close();
          await checkpointer.stop();
        },
      }
    : kysely;
  // Authentications may be cached (core's AuthCache): this process's own changes are heard at once;
  // another process's (`serve --workers`, the CLI) within the cache's TTL, since a file carries no
  // notifications.
  return withAuthChangeFeed(storage, PROCESS_LOCAL_CHANNEL);
}
