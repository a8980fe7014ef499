import { type Kysely, sql } from 'kysely';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { initialMigration } from './0001-initial.js';
import { requestMeteringMigration } from './0002-request-metering.js';
import { requestInProgressMigration } from './0003-request-in-progress.js';
import { healthProbeMigration } from './0004-health-probe.js';
import { accountFeaturesMigration } from './0005-account-features.js';
import { batchesMigration } from './0006-batches.js';
import { oauthMigration } from './0007-oauth.js';
import { guardrailsMigration } from './0008-guardrails.js';
import { recordsExportMigration } from './0009-records-export.js';
import { postgresHotPathMigration } from './0010-postgres-hot-path.js';
import { postgresGroupCommitMigration } from './0011-postgres-group-commit.js';
import { postgresUnloggedRateLimitsMigration } from './0012-postgres-unlogged-rate-limits.js';
import { postgresSetBasedBatchesMigration } from './0013-postgres-set-based-batches.js';
import { postgresGroupCommitRateLimitsMigration } from './0014-postgres-group-commit-rate-limits.js';
import { byokInsertionOrderMigration } from './0015-byok-insertion-order.js';
import { sqliteLeanHoldsMigration } from './0016-sqlite-lean-holds.js';
import { postgresHoldsIndexScansMigration } from './0017-postgres-holds-index-scans.js';
import { monthChargeTotalsMigration } from './0018-month-charge-totals.js';
import { postgresReserveBatchStatementsMigration } from './0019-postgres-reserve-batch-statements.js';
import { ledgerUnreadIndexesMigration } from './0020-ledger-unread-indexes.js';
import { recordsClosedThroughHoldsMigration } from './0021-records-closed-through-holds.js';
import { postgresHitsWithReservesMigration } from './0022-postgres-hits-with-reserves.js';
import { postgresSettleHoldsByKeyMigration } from './0023-postgres-settle-holds-by-key.js';
import { keysRevokedAndExpiringMigration } from './0024-keys-revoked-and-expiring.js';

/** One schema change. `up` runs inside the migrating transaction. */
export interface TollgateMigration {
  name: string;
  // biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
  up(db: Kysely<any>): Promise<void>;
}

/** Where applied migrations are recorded, in the storage's own schema. */
export const MIGRATIONS_TABLE = 'tollgate_migrations';

/**
 * Tollgate's versioned migrations, in code (no migration folder to ship or find at run time), in
 * the order they run. Names are recorded in `tollgate_migrations`: never rename or reorder one.
 */
export function tollgateMigrations(dialect: DialectCapabilities): TollgateMigration[] {
  return [
    { name: '0001_initial', up: initialMigration(dialect).up },
    { name: '0002_request_metering', up: requestMeteringMigration(dialect).up },
    { name: '0003_request_in_progress', up: requestInProgressMigration(dialect).up },
    { name: '0004_health_probe', up: healthProbeMigration(dialect).up },
    { name: '0005_account_features', up: accountFeaturesMigration(dialect).up },
    { name: '0006_batches', up: batchesMigration(dialect).up },
    { name: '0007_oauth', up: oauthMigration(dialect).up },
    { name: '0008_guardrails', up: guardrailsMigration(dialect).up },
    { name: '0009_records_export', up: recordsExportMigration(dialect).up },
    { name: '0010_postgres_hot_path', up: postgresHotPathMigration(dialect).up },
    { name: '0011_postgres_group_commit', up: postgresGroupCommitMigration(dialect).up },
    { name: '0012_postgres_unlogged_rate_limits', up: postgresUnloggedRateLimitsMigration(dialect).up },
    { name: '0013_postgres_set_based_batches', up: postgresSetBasedBatchesMigration(dialect).up },
    {
      name: '0014_postgres_group_commit_rate_limits',
      up: postgresGroupCommitRateLimitsMigration(dialect).up,
    },
    { name: '0015_byok_insertion_order', up: byokInsertionOrderMigration(dialect).up },
    { name: '0016_sqlite_lean_holds', up: sqliteLeanHoldsMigration(dialect).up },
    { name: '0017_postgres_holds_index_scans', up: postgresHoldsIndexScansMigration(dialect).up },
    { name: '0018_month_charge_totals', up: monthChargeTotalsMigration(dialect).up },
    {
      name: '0019_postgres_reserve_batch_statements',
      up: postgresReserveBatchStatementsMigration(dialect).up,
    },
    { name: '0020_ledger_unread_indexes', up: ledgerUnreadIndexesMigration().up },
    { name: '0021_records_closed_through_holds', up: recordsClosedThroughHoldsMigration(dialect).up },
    { name: '0022_postgres_hits_with_reserves', up: postgresHitsWithReservesMigration(dialect).up },
    { name: '0023_postgres_settle_holds_by_key', up: postgresSettleHoldsByKeyMigration(dialect).up },
    { name: '0024_keys_revoked_and_expiring', up: keysRevokedAndExpiringMigration(dialect).up },
  ];
}

/**
 * Brings the schema up to the latest migration (or to `target`), or throws. Must run inside one
 * write transaction: the dialect's migration lock (a Postgres advisory lock keyed by the schema;
 * SQLite's `BEGIN IMMEDIATE` write lock already is one) makes processes that start together run
 * each migration once, and a failure leaves no half-applied change (DDL is transactional in both
 * databases). Reads nothing outside the current schema, so other schemas of the same database —
 * other tenants, other tests, dropped or being migrated — cannot disturb it.
 */
export async function migrateToLatest(
  // biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
  trx: Kysely<any>,
  dialect: DialectCapabilities,
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
  const migrations = tollgateMigrations(dialect);
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
