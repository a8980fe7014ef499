import type { DirectStatements } from '@tollgate/storage-kysely';
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/** Enough for every query the storage writes (they are parameterised, so their text repeats). */
const MAX_STATEMENTS = 500;

/**
 * The database as kysely's SQLite driver sees it, with each SQL text prepared once and reused:
 * kysely prepares every query it runs, and compiling the same statement on every request is a large
 * share of the per-request cost. Least recently used statements are dropped past `MAX_STATEMENTS`.
 * better-sqlite3 statements are reusable as long as one finishes before the next starts, which
 * holds here: kysely runs them to completion (`all`/`run`) on its single connection.
 */
export function withStatementCache(database: BetterSqlite3.Database): SqliteDatabase & DirectStatements {
  const statements = new Map<string, BetterSqlite3.Statement>();
  const prepare = (sql: string): BetterSqlite3.Statement => {
    let statement = statements.get(sql);
    if (statement) {
      statements.delete(sql);
    } else {
      statement = database.prepare(sql);
      if (statements.size >= MAX_STATEMENTS) statements.delete(statements.keys().next().value!);
    }
    statements.set(sql, statement);
    return statement;
  };
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare,
    // What kysely's SQLite connection does with a statement, minus its result object: a statement
    // that returns rows (a `RETURNING` one too, whose changes SQLite makes at the first step) is
    // stepped once for its first row; any other is run for its count of changed rows.
    first: (sql, parameters) => {
      const statement = prepare(sql);
      if (statement.reader) return statement.get(parameters);
      statement.run(parameters);
      return undefined;
    },
    run: (sql, parameters) => {
      const statement = prepare(sql);
      if (statement.reader) {
        statement.all(parameters);
        return 0;
      }
      return statement.run(parameters).changes;
    },
  } as SqliteDatabase & DirectStatements;
}
