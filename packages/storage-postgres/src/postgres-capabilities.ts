import type { DialectCapabilities } from '@tollgate/storage-kysely';

/**
 * How Postgres differs: BIGINT and BOOLEAN columns, a `seq` identity column for insertion order,
 * `SELECT … FOR UPDATE`, an advisory lock for migrations. Reserve and settle run as server-side
 * functions (`sql/functions/`), the calls of one turn of the event loop committed together in one
 * batch statement: one round trip at most each.
 */
export const postgresCapabilities: DialectCapabilities = {
  name: 'postgres',
  int8Type: 'bigint',
  booleanType: 'boolean',
  bool: (value) => value,
  substringPositionFunction: 'strpos',
  selectForUpdate: true,
  insertionOrderColumn: 'seq',
  nativeReserveAndSettle: true,
  // Keyed by the schema, so tenants (or tests) in other schemas migrate side by side.
  migrationLockSql: `SELECT pg_advisory_xact_lock(hashtext('tollgate_migrations'), hashtext(current_schema()))`,
};
