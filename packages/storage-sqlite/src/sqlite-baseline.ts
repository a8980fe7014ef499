import { readFileSync } from 'node:fs';
import type { TollgateMigration } from '@tollgate/storage-kysely';
import { splitQuery, sqliteSplitterOptions } from 'dbgate-query-splitter';
import { sql } from 'kysely';

/**
 * The package's `sql/baseline.sql`, one level up from this module whether it runs from `src/` or from
 * the bundled `dist/index.js`.
 */
const BASELINE = new URL('../sql/baseline.sql', import.meta.url);

/**
 * Migration `0001_baseline` on SQLite: the statements of `sql/baseline.sql`, in order, one at a time
 * (a prepared statement holds one). The splitter keeps a trigger's `BEGIN … END` body whole; a piece
 * that is only comments is no statement.
 */
export const sqliteBaseline: TollgateMigration['up'] = async (db) => {
  const statements = splitQuery(readFileSync(BASELINE, 'utf8'), sqliteSplitterOptions) as string[];
  for (const statement of statements) {
    if (statement.replace(COMMENTS, '').trim() !== '') await sql.raw(statement).execute(db);
  }
};
const COMMENTS = /--[^\n]*|\/\*[\s\S]*?\*\//g;
