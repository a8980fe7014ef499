import type { DirectStatements } from '@tollgate/storage-kysely';
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/** Enough for every query the storage writes (they are parameterised, so their text repeats). */
const MAX_STATEMENTS = 500;

interface Prepared {
  statement: BetterSqlite3.Statement;
  /** Whether it returns rows (a `SELECT`, or a write with `RETURNING`): read once, at preparation. */
  reader: boolean;
}

/**
 * The database as kysely's SQLite driver sees it, with each SQL text prepared once and reused:
 * kysely prepares every query it runs, and compiling the same statement on every request is a large
 * share of the per-request cost. Past `MAX_STATEMENTS` texts the one prepared longest ago is
 * dropped (the storage's own queries are far fewer; only ad-hoc ones come and go).
 * better-sqlite3 statements are reusable as long as one finishes before the next starts, which
 * holds here: every statement runs to completion (`all`/`get`/`run`) on the single connection.
 *
 * It is also the {@link DirectStatements} the prepared queries of a transaction run on, past kysely.
 */
export function withStatementCache(database: BetterSqlite3.Database): SqliteDatabase & DirectStatements {
  const cache = new Map<string, Prepared>();
  const prepared = (sql: string): Prepared => {
    let entry = cache.get(sql);
    if (!entry) {
      const statement = database.prepare(sql);
      entry = { statement, reader: statement.reader };
      if (cache.size >= MAX_STATEMENTS) cache.delete(cache.keys().next().value!);
      cache.set(sql, entry);
    }
    return entry;
  };
  return {
    close: () => {
      cache.clear();
      database.close();
    },
    prepare: (sql: string) => prepared(sql).statement,
    // What kysely's SQLite connection does with a statement, minus its result object: a statement
    // that returns rows (a `RETURNING` one too, whose changes SQLite makes at the first step) is
    // stepped once for its first row; any other is run for its count of changed rows.
    first: (sql, parameters) => {
      const { statement, reader } = prepared(sql);
      if (reader) return statement.get(parameters);
      statement.run(parameters);
      return undefined;
    },
    run: (sql, parameters) => {
      const { statement, reader } = prepared(sql);
      if (reader) {
        statement.all(parameters);
        return 0;
      }
      return statement.run(parameters).changes;
    },
  } as SqliteDatabase & DirectStatements;
}
