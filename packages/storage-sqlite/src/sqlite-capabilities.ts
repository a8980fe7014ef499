import type { DialectCapabilities } from '@tollgate/storage-kysely';

const APPEND_ONLY = `SELECT RAISE(ABORT, 'ledger_entries is append-only')`;

/** How SQLite differs: INTEGER for money and flags, 0/1 bound for booleans, rowid for order, triggers. */
export const sqliteCapabilities: DialectCapabilities = {
  name: 'sqlite',
  int8Type: 'integer',
  booleanType: 'integer',
  bool: (value) => (value ? 1 : 0),
  substringPositionFunction: 'instr',
  selectForUpdate: false,
  insertionOrderColumn: 'rowid',
  migrationLockSql: null,
  nativeReserveAndSettle: false,
  appendOnlyLedgerSql: [
    `CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries BEGIN ${APPEND_ONLY}; END`,
    `CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries BEGIN ${APPEND_ONLY}; END`,
  ],
};
