import type { PGlite, Transaction } from '@electric-sql/pglite';
import pg from 'pg';
import { vi } from 'vitest';

/*
 * Statements sent to Postgres, counted where they leave the process: every one is a round trip
 * (BEGIN and COMMIT included). For the round-trip tests of the adapter and of the gateway.
 * Restore the pg spy with `vi.restoreAllMocks()`.
 */

/** Counts the statements `pglite` runs from now on. */
export function countPgliteStatements(pglite: PGlite): { count: number } {
  const counter = { count: 0 };
  const counted = <F extends (...args: never[]) => Promise<unknown>>(run: F): F =>
    ((...args: Parameters<F>) => {
      counter.count++;
      return run(...args);
    }) as F;
  const transaction = pglite.transaction.bind(pglite);
  pglite.query = counted(pglite.query.bind(pglite));
  pglite.exec = counted(pglite.exec.bind(pglite));
  pglite.transaction = <T>(work: (tx: Transaction) => Promise<T>) => {
    counter.count += 2; // BEGIN, and COMMIT or ROLLBACK
    return transaction((tx) =>
      work({ ...tx, query: counted(tx.query), exec: counted(tx.exec), sql: counted(tx.sql) } as Transaction),
    );
  };
  return counter;
}

/** Counts the statements every pg client runs from now on (PreparingClient's go through here too). */
export function countPgStatements(): { count: number } {
  const counter = { count: 0 };
  const query = pg.Client.prototype.query;
  vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    counter.count++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query);
  return counter;
}
