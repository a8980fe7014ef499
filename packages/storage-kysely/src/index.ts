export type {
  AccountsTable,
  ApiKeysTable,
  BooleanColumn,
  ByokKeysTable,
  CreditReservationsTable,
  Database,
  DbBoolean,
  HealthProbeTable,
  IdempotencyClaimsTable,
  Int8,
  LedgerEntriesTable,
  NullableBooleanColumn,
  NullableInt8,
  OAuthClientsTable,
  OAuthCodesTable,
  PresetsTable,
  ProjectsTable,
  RateLimitWindowsTable,
  RequestRecordsTable,
  ResponseCacheTable,
} from './database.js';
export type { DialectCapabilities } from './dialect-capabilities.js';
export { createKyselyStorage, type KyselyStorageOptions } from './kysely-storage.js';
export { migrateToLatest, type TollgateMigration, tollgateMigrations } from './migrations/index.js';
export { type DirectStatements, runPreparedQueriesDirectly } from './prepared-query.js';
export { type QueryContext, write } from './query-context.js';
export { toBoolean, toInteger, toNullableInteger } from './row-mappers.js';
