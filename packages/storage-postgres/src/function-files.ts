import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { readSqlFile, sqlFilesIn, sqlStatements } from './sql-files.js';

/** Where the checksum of each function file as last applied is kept, in the storage's own schema. */
export const FUNCTIONS_TABLE = 'tollgate_functions';

/** One file of `sql/functions/`: the function it creates, its statements, the checksum of its text. */
export interface FunctionFile {
  /** The file's name, e.g. `reserve-batch.sql`. */
  file: string;
  /** The function its first statement creates: `tollgate_` and the file's name in snake case. */
  name: string;
  statements: string[];
  checksum: string;
}

/** The files of `sql/functions/`, sorted by name. */
export function readFunctionFiles(): FunctionFile[] {
  return sqlFilesIn('functions').map((file) => functionFile(file, readSqlFile(`functions/${file}`)));
}

/**
 * A function file from its name and text. Throws unless its first statement creates the function
 * its name says: one function per file, found by its name.
 */
export function functionFile(file: string, text: string): FunctionFile {
  const name = functionOf(file);
  const statements = sqlStatements(text);
  const created = CREATE_FUNCTION.exec(statements[0] ?? '')?.[1];
  if (created !== name) {
    throw new Error(`sql/functions/${file} must begin with CREATE OR REPLACE FUNCTION ${name}(…)`);
  }
  return { file, name, statements, checksum: createHash('sha256').update(text).digest('hex') };
}
const CREATE_FUNCTION = /^(?:\s*--[^\n]*\n)*\s*CREATE OR REPLACE FUNCTION (\w+)\(/;

/** `reserve-batch.sql` → `tollgate_reserve_batch`. */
function functionOf(file: string): string {
  return `tollgate_${file.replace(/\.sql$/, '').replaceAll('-', '_')}`;
}

/**
 * The repeatable step after the migrations (Flyway's `R__` scripts): applies each function file
 * whose text is not the one last applied here (by checksum), or whose function is missing, and drops
 * the function of a file applied before that is gone. A file is applied on a clean slate: its
 * function is dropped first, every overload, with what depends on it (its triggers, which the file
 * creates again; nothing else may depend on a function), so a file may change the function's
 * parameters or result. Runs in the migrating transaction, under its lock, so other processes wait
 * for it and never see a function missing. Returns the files applied.
 *
 * The database keeps the text of the last process that applied it: every process on one database
 * must run the same version.
 */
export async function applyFunctionFiles(
  // biome-ignore lint/suspicious/noExplicitAny: the schema is being migrated, not the typed one
  trx: Kysely<any>,
  files: readonly FunctionFile[] = readFunctionFiles(),
): Promise<string[]> {
  await sql`CREATE TABLE IF NOT EXISTS ${sql.id(FUNCTIONS_TABLE)}
    (file text PRIMARY KEY, checksum text NOT NULL, applied_at bigint NOT NULL)`.execute(trx);
  const { rows } = await sql<{ file: string; checksum: string }>`SELECT file, checksum FROM ${sql.id(
    FUNCTIONS_TABLE,
  )}`.execute(trx);
  const checksums = new Map(rows.map((row) => [row.file, row.checksum]));
  const present = new Set(
    (
      await sql<{ name: string }>`SELECT proname AS name FROM pg_proc WHERE pronamespace = ${SCHEMA}`.execute(
        trx,
      )
    ).rows.map((row) => row.name),
  );
  const applied: string[] = [];
  for (const file of files) {
    if (checksums.get(file.file) === file.checksum && present.has(file.name)) continue;
    await dropFunction(trx, file.name);
    for (const statement of file.statements) await sql.raw(statement).execute(trx);
    await sql`INSERT INTO ${sql.id(FUNCTIONS_TABLE)} (file, checksum, applied_at)
      VALUES (${file.file}, ${file.checksum}, ${Date.now()})
      ON CONFLICT (file) DO UPDATE SET checksum = excluded.checksum, applied_at = excluded.applied_at`.execute(
      trx,
    );
    applied.push(file.file);
  }
  for (const file of checksums.keys()) {
    if (files.some((kept) => kept.file === file)) continue;
    await dropFunction(trx, functionOf(file));
    await sql`DELETE FROM ${sql.id(FUNCTIONS_TABLE)} WHERE file = ${file}`.execute(trx);
  }
  return applied;
}

/** The current schema's oid, for reads of the catalog. */
const SCHEMA = sql`(SELECT oid FROM pg_namespace WHERE nspname = current_schema())`;

/** Drops every overload of `name` in the current schema, with the triggers that call it. */
// biome-ignore lint/suspicious/noExplicitAny: see applyFunctionFiles
async function dropFunction(trx: Kysely<any>, name: string): Promise<void> {
  const { rows } = await sql<{ signature: string }>`SELECT oid::regprocedure::text AS signature FROM pg_proc
    WHERE pronamespace = ${SCHEMA} AND proname = ${name}`.execute(trx);
  for (const { signature } of rows) await sql.raw(`DROP FUNCTION ${signature} CASCADE`).execute(trx);
}
