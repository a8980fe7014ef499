import type { DialectCapabilities } from '@tollgate/storage-kysely';

/**
 * How Postgres differs: BIGINT and BOOLEAN columns, a `seq` identity column for insertion order, and
 * a plpgsql trigger function that rejects every UPDATE, DELETE and TRUNCATE of the ledger.
 * Reserve and settle run as server-side functions (migration 0010), the calls of one turn of the
 * event loop committed together in one batch statement (migration 0011): one round trip at most each.
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
  appendOnlyLedgerSql: [
    `CREATE FUNCTION tollgate_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger_entries is append-only' USING ERRCODE = 'restrict_violation';
END
$$`,
    `CREATE TRIGGER ledger_entries_no_update_delete BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION tollgate_ledger_append_only()`,
    `CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION tollgate_ledger_append_only()`,
  ],
};
