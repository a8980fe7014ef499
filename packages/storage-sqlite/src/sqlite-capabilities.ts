import type { DialectCapabilities } from '@tollgate/storage-kysely';

/** How SQLite differs: INTEGER for money and flags, 0/1 bound for booleans, rowid for order, no row locks. */
export const sqliteCapabilities: DialectCapabilities = {
  name: 'sqlite',
  int8Type: 'integer',
  booleanType: 'integer',
  bool: (value) => (value ? 1 : 0),
  substringPositionFunction: 'instr',
  selectForUpdate: false,
  insertionOrderColumn: 'rowid',
  migrationLockSql: null,
};
