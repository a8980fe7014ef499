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
export { createKyselyStorage, type KyselyStorageOptions, type MeteringPath } from './kysely-storage.js';
export { migrateToLatest, type TollgateMigration, tollgateMigrations } from './migrations/index.js';
export { type DirectStatements, runPreparedQueriesDirectly } from './prepared-query.js';
export { type QueryContext, write } from './query-context.js';
export { type CountHit, countHitNow, type HitParams, hitParams } from './rate-limit-queries.js';
export { checkReserveInput, type Refusal, rateLimited } from './reservation-queries.js';
export {
  mapReservation,
  requestRecordRow,
  toBoolean,
  toInteger,
  toNullableInteger,
} from './row-mappers.js';
export { checkCharge } from './settle-queries.js';
export { utcMonthContaining } from './utc-month.js';
