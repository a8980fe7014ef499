import { type Database, migrateToLatest } from '@tollgate/storage-kysely';
import { CompiledQuery, type DatabaseConnection, type Kysely, sql } from 'kysely';
import { applyFunctionFiles } from './function-files.js';
import { postgresBaseline } from './postgres-baseline.js';
import { postgresCapabilities } from './postgres-capabilities.js';

/** `name` as a quoted SQL identifier, whatever characters it holds. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * A `onCreateConnection` hook that makes `schema` the connection's only search_path, so unqualified
 * table names (ours, and kysely's migration tables) resolve there and nowhere else.
 */
export function useSchema(schema: string): (connection: DatabaseConnection) => Promise<void> {
  return async (connection) => {
    await connection.executeQuery(CompiledQuery.raw(`set search_path to ${quoteIdentifier(schema)}`));
  };
}

/**
 * Creates `schema` when given and missing, then runs the migrations in the connection's current
 * schema and applies the function files that changed (`applyFunctionFiles`), in one transaction under
 * an advisory lock keyed by that schema: processes starting together run each migration once, and
 * nothing outside the schema is read.
 */
export async function preparePostgres(db: Kysely<Database>, schema: string | undefined): Promise<void> {
  if (schema !== undefined) await createSchemaIfMissing(db, schema);
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  if (!rows[0]?.schema)
    throw new Error('the search_path names no existing schema: pass `schema`, or create one');
  await db.transaction().execute(async (trx) => {
    await migrateToLatest(trx, postgresCapabilities, postgresBaseline);
    await applyFunctionFiles(trx);
  });
}

async function createSchemaIfMissing(db: Kysely<Database>, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  } catch (error) {
    // Two processes creating the schema at once: "if not exists" can still fail with a unique
    // violation in the one that loses. The schema being there is all that matters.
    const { rows } = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(db);
    if (rows.length === 0) throw error;
  }
}
