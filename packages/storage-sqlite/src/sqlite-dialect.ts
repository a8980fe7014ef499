import {
  type DialectAdapter,
  type Driver,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
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
  #driver: ImmediateSqliteDriver | undefined;

  constructor(config: SqliteDialectConfig & { busyTimeoutMs: number; inTransaction: () => boolean }) {
    const { busyTimeoutMs, inTransaction, ...dialectConfig } = config;
    super(dialectConfig);
    this.#config = dialectConfig;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#inTransaction = inTransaction;
  }

  override createDriver(): Driver {
    this.#driver = new ImmediateSqliteDriver(this.#config, this.#busyTimeoutMs, this.#inTransaction);
    return this.#driver;
  }

  /** See {@link ImmediateSqliteDriver.committed}. */
  committed(): Promise<void> {
    return this.#driver ? this.#driver.committed() : Promise.resolve();
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
