import type { TollgateMigration } from '@tollgate/storage-kysely';
import { sql } from 'kysely';
import { readSqlFile, sqlStatements } from './sql-files.js';

/** Migration `0001_baseline` on Postgres: the statements of the package's `sql/baseline.sql`, in order. */
export const postgresBaseline: TollgateMigration['up'] = async (db) => {
  for (const statement of sqlStatements(readSqlFile('baseline.sql'))) await sql.raw(statement).execute(db);
};
