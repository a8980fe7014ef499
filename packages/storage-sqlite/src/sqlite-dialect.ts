import { type Database, type DirectStatements, runPreparedQueriesDirectly } from '@tollgate/storage-kysely';
import {
  type DatabaseConnection,
  DefaultQueryExecutor,
  type DialectAdapter,
  type Driver,
  SingleConnectionProvider,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
  Transaction,
} from 'kysely';
import { ImmediateSqliteDriver } from './sqlite-driver.js';

/**
 * kysely's SQLite dialect with Tollgate's two changes: transactions take the write lock up front and
 * commit in groups ({@link ImmediateSqliteDriver}), and DDL is declared transactional (which it is in SQLite) so the
 * migrator accepts running inside such a transaction: a second process starting at the same moment
 * then waits for the first one's migrations instead of racing it.
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #busyTimeoutMs: number;
  readonly #inTransaction: () => boolean;
  readonly #direct: DirectStatements;
  #driver: ImmediateSqliteDriver | undefined;
  /** The handle {@link transact} gives every transaction's work; built once. */
  #member: Transaction<Database> | undefined;

  /**
   * `direct`: the same database's statements run synchronously, which the prepared queries of a
   * transaction run by {@link transact} go to.
   */
  constructor(
    config: SqliteDialectConfig & {
      busyTimeoutMs: number;
      inTransaction: () => boolean;
      direct: DirectStatements;
    },
  ) {
    const { busyTimeoutMs, inTransaction, direct, ...dialectConfig } = config;
    super(dialectConfig);
    this.#config = dialectConfig;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#inTransaction = inTransaction;
    this.#direct = direct;
  }

  override createDriver(): Driver {
    this.#driver = new ImmediateSqliteDriver(
      this.#config,
      this.#busyTimeoutMs,
      this.#inTransaction,
      this.#direct,
    );
    return this.#driver;
  }

  /** See {@link ImmediateSqliteDriver.committed}. */
  committed(): Promise<void> {
    return this.#driver ? this.#driver.committed() : Promise.resolve();
  }

  /**
   * Runs `work` in a transaction of the open commit group and resolves once that group committed
   * (see {@link ImmediateSqliteDriver.transact}): what `db.transaction().execute(work)` does, with
   * one kysely `Transaction` reused by every transaction instead of one built per transaction.
   */
  transact<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const driver = this.#driver;
    if (!driver)
      return Promise.reject(new Error('the SQLite dialect has no driver yet (no Kysely was made with it)'));
    this.#member ??= this.#memberTransaction(driver);
    return driver.transact(this.#member, work);
  }

  #memberTransaction(driver: ImmediateSqliteDriver): Transaction<Database> {
    const connection: DatabaseConnection = {
      executeQuery: (query) => driver.executeInTransaction(query),
      streamQuery: () => {
        throw new Error('streaming is not supported inside a SQLite transaction');
      },
    };
    const adapter = this.createAdapter();
    const executor = new DefaultQueryExecutor(
      this.createQueryCompiler(),
      adapter,
      new SingleConnectionProvider(connection),
      [],
    );
    const trx = new Transaction<Database>({ config: { dialect: this }, driver, dialect: this, executor });
    runPreparedQueriesDirectly(trx, this.#direct);
    return trx;
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }

  /**
   * Not so: there is one connection, but {@link ImmediateSqliteDriver} hands it out one holder at a
   * time itself, so that a statement can wait for its group's commit after letting go of it.
   */
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}
