import type { DialectCapabilities } from '@tollgate/storage-kysely';

/**
 * How Postgres differs: BIGINT and BOOLEAN columns, a `seq` identity column for insertion order,
 * `SELECT … FOR UPDATE`, an advisory lock for migrations. Reserve and settle are not a capability
 * but the adapter's own metering path (`postgres-metering.ts`), which it hands to the storage.
 */
export const postgresCapabilities: DialectCapabilities = {
  name: 'postgres',
  int8Type: 'bigint',
  booleanType: 'boolean',
  bool: (value) => value,
  substringPositionFunction: 'strpos',
  selectForUpdate: true,
  insertionOrderColumn: 'seq',
  // Keyed by the schema, so tenants (or tests) in other schemas migrate side by side.
  migrationLockSql: `SELECT pg_advisory_xact_lock(hashtext('tollgate_migrations'), hashtext(current_schema()))`,
};
