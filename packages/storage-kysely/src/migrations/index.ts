import { type Kysely, sql } from 'kysely';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { keysRevokedAndExpiringMigration } from './0002-keys-revoked-and-expiring.js';
import { requestOverrunMigration } from './0003-request-overrun.js';
import { keyLimitWindowsMigration } from './0004-key-limit-windows.js';

/** One schema change. `up` runs inside the migrating transaction. */
export interface TollgateMigration {
  name: string;
  // biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
  up(db: Kysely<any>): Promise<void>;
}

/** Where applied migrations are recorded, in the storage's own schema. */
export const MIGRATIONS_TABLE = 'tollgate_migrations';

/**
 * Tollgate's migrations, in the order they run. The first is the dialect's baseline, which its
 * adapter brings (`sql/baseline.sql` of storage-sqlite and storage-postgres: every table and index
 * as they stood when the earlier migrations were squashed into it). Each later one is a file of this
 * folder, written once for both dialects with the differences taken from `dialect`, and a line here.
 * Names are recorded in `tollgate_migrations`: never rename or reorder one.
 */
export function tollgateMigrations(
  dialect: DialectCapabilities,
  baseline: TollgateMigration['up'],
): TollgateMigration[] {
  return [
    { name: '0001_baseline', up: baseline },
    { name: '0002_keys_revoked_and_expiring', up: keysRevokedAndExpiringMigration(dialect).up },
    { name: '0003_request_overrun', up: requestOverrunMigration(dialect).up },
    { name: '0004_key_limit_windows', up: keyLimitWindowsMigration(dialect).up },
  ];
}

/**
 * Brings the schema up to the latest migration (or to `target`), or throws. Must run inside one
 * write transaction: the dialect's migration lock (a Postgres advisory lock keyed by the schema;
 * SQLite's `BEGIN IMMEDIATE` write lock already is one) makes processes that start together run
 * each migration once, and a failure leaves no half-applied change (DDL is transactional in both
 * databases). Reads nothing outside the current schema, so other schemas of the same database —
 * other tenants, other tests, dropped or being migrated — cannot disturb it. A database that records
 * a migration this list does not have is refused before anything runs ({@link unknownMigrations}).
 */
export async function migrateToLatest(
  // biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
  trx: Kysely<any>,
  dialect: DialectCapabilities,
  baseline: TollgateMigration['up'],
  target?: string,
): Promise<string[]> {
  if (dialect.migrationLockSql) await sql.raw(dialect.migrationLockSql).execute(trx);
  await trx.schema
    .createTable(MIGRATIONS_TABLE)
    .ifNotExists()
    .addColumn('name', 'text', (col) => col.primaryKey().notNull())
    .addColumn('applied_at', dialect.int8Type, (col) => col.notNull())
    .execute();
  const rows = await trx.selectFrom(MIGRATIONS_TABLE).select('name').execute();
  const applied = new Set(rows.map((row: { name: string }) => row.name));
  const migrations = tollgateMigrations(dialect, baseline);
  const unknown = [...applied].filter((name) => !migrations.some((m) => m.name === name));
  if (unknown.length > 0) throw unknownMigrations(dialect, unknown);
  const end = target === undefined ? migrations.length : migrations.findIndex((m) => m.name === target) + 1;
  if (end === 0) throw new Error(`${dialect.name}: no migration named ${target}`);
  const ran: string[] = [];
  for (const migration of migrations.slice(0, end)) {
    if (applied.has(migration.name)) continue;
    try {
      await migration.up(trx);
    } catch (error) {
      throw new Error(`${dialect.name} migration ${migration.name} failed: ${String(error)}`, {
        cause: error,
      });
    }
    await trx.insertInto(MIGRATIONS_TABLE).values({ name: migration.name, applied_at: Date.now() }).execute();
    ran.push(migration.name);
  }
  return ran;
}

/** The first migration of every database set up before the migrations were squashed into a baseline. */
const BEFORE_THE_BASELINE = '0001_initial';

/**
 * Why a database that records migrations this version does not have cannot be used: it was set up
 * before the migrations were squashed into one baseline (it records `0001_initial`; nothing was
 * released then, so there is no upgrade path), or a newer version migrated it, whose schema this
 * version would misread (and whose server-side functions it would write over with its own).
 */
function unknownMigrations(dialect: DialectCapabilities, unknown: string[]): Error {
  const names = unknown.sort().join(', ');
  if (unknown.includes(BEFORE_THE_BASELINE)) {
    return new Error(
      `${dialect.name}: this database was set up before Tollgate's migrations were squashed into one ` +
        `baseline (it records ${names}), and cannot be upgraded: create a new database (or schema, or ` +
        'file) and start Tollgate on it, which sets it up',
    );
  }
  return new Error(
    `${dialect.name}: this database records migrations this version of Tollgate does not have ` +
      `(${names}): a newer version migrated it; run that version`,
  );
}
