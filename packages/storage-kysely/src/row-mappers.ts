import type {
  Account,
  ApiKey,
  ByokKey,
  CachedResponse,
  CreditReservation,
  Guardrail,
  GuardrailVerdict,
  LedgerEntry,
  Preset,
  Project,
  RequestRecord,
  RequestStatus,
  RoutingFailure,
} from '@tollgate/core';
import type { Selectable } from 'kysely';
import type {
  AccountsTable,
  ApiKeysTable,
  ByokKeysTable,
  CreditReservationsTable,
  GuardrailsTable,
  LedgerEntriesTable,
  PresetsTable,
  ProjectsTable,
  RequestRecordsTable,
  ResponseCacheTable,
} from './database.js';
import type { DialectCapabilities } from './dialect-capabilities.js';
import { columnsOf, type InsertRow } from './prepared-query.js';
import { assertInteger } from './query-context.js';

/**
 * A database integer as a JS number. pg hands int8 and numeric (`sum`) over as strings, PGlite and
 * better-sqlite3 as numbers; anything that is not a safe integer is refused rather than rounded,
 * because a rounded balance would be silently wrong money.
 */
export function toInteger(value: unknown): number {
  const number = typeof value === 'string' || typeof value === 'bigint' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number)) {
    throw new RangeError(`expected a safe integer from the database, got ${String(value)}`);
  }
  return number;
}

/** {@link toInteger}, keeping SQL NULL as `null`. */
export function toNullableInteger(value: unknown): number | null {
  return value === null || value === undefined ? null : toInteger(value);
}

/** A database flag (0/1 from SQLite, a boolean from Postgres) as a boolean. */
export function toBoolean(value: unknown): boolean {
  if (value === true || value === 1) return true;
  if (value === false || value === 0) return false;
  throw new TypeError(`expected a boolean from the database, got ${String(value)}`);
}

/** An `accounts` row as an {@link Account}. */
export function mapAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    name: row.name,
    balanceMicros: toInteger(row.balance_micros),
    monthlyLimitMicros: toNullableInteger(row.monthly_limit_micros),
    defaultRpm: toNullableInteger(row.default_rpm),
    suspended: toBoolean(row.suspended),
    createdAt: toInteger(row.created_at),
  };
}

/** A `projects` row as a {@link Project}. */
export function mapProject(row: Selectable<ProjectsTable>): Project {
  return { id: row.id, accountId: row.account_id, name: row.name, createdAt: toInteger(row.created_at) };
}

/** An `api_keys` row as an {@link ApiKey}; the hash stays behind. */
export function mapApiKey(row: Selectable<ApiKeysTable>): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    projectId: row.project_id,
    name: row.name,
    scope: row.scope,
    env: row.env,
    prefix: row.prefix,
    spendLimitMicros: toNullableInteger(row.spend_limit_micros),
    limitReset: row.limit_reset ?? null,
    rateLimitRpm: toNullableInteger(row.rate_limit_rpm),
    spentMicros: toInteger(row.spent_micros),
    disabled: toBoolean(row.disabled),
    revoked: toBoolean(row.revoked),
    expiresAt: toNullableInteger(row.expires_at),
    oauthClientId: row.oauth_client_id,
    createdAt: toInteger(row.created_at),
  };
}

/** A `ledger_entries` row as a {@link LedgerEntry}. */
export function mapLedgerEntry(row: Selectable<LedgerEntriesTable>): LedgerEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    amountMicros: toInteger(row.amount_micros),
    balanceAfterMicros: toInteger(row.balance_after_micros),
    kind: row.kind,
    description: row.description,
    requestId: row.request_id,
    keyId: row.key_id,
    createdAt: toInteger(row.created_at),
  };
}

/** A `credit_reservations` row as a {@link CreditReservation}. */
export function mapReservation(row: Selectable<CreditReservationsTable>): CreditReservation {
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.key_id,
    // Nullable in the schema, but every hold is taken for a request and written with its id.
    requestId: row.request_id ?? '',
    amountMicros: toInteger(row.amount_micros),
    createdAt: toInteger(row.created_at),
    expiresAt: toInteger(row.expires_at),
  };
}

/** A `request_records` row as inserted: every column. */
export type RecordRow = InsertRow<RequestRecordsTable>;
export const RECORD_COLUMNS = columnsOf<RequestRecordsTable>()({
  id: true,
  account_id: true,
  key_id: true,
  project_id: true,
  endpoint: true,
  requested_model: true,
  model: true,
  provider: true,
  status: true,
  http_status: true,
  error_code: true,
  error_message: true,
  stream: true,
  prompt_tokens: true,
  completion_tokens: true,
  cached_tokens: true,
  cost_micros: true,
  saved_micros: true,
  overrun_micros: true,
  waived: true,
  byok: true,
  cache_hit: true,
  preset: true,
  ttft_ms: true,
  duration_ms: true,
  finish_reason: true,
  attempts: true,
  routing_failures: true,
  attachments: true,
  guardrails: true,
  metadata: true,
  created_at: true,
});

/**
 * A {@link RequestRecord} as a `request_records` row: the one place its JSON columns are written.
 * Refuses a non-integer count, money or time rather than let the database round or reject it later.
 */
export function requestRecordRow(record: RequestRecord, dialect: DialectCapabilities): RecordRow {
  for (const name of [
    'httpStatus',
    'promptTokens',
    'completionTokens',
    'cachedTokens',
    'costMicros',
    'savedMicros',
    'overrunMicros',
    'attempts',
    'createdAt',
  ] as const) {
    assertInteger(name, record[name]);
  }
  assertInteger('ttftMs', record.ttftMs, { nullable: true });
  assertInteger('durationMs', record.durationMs, { nullable: true });
  return {
    id: record.id,
    account_id: record.accountId,
    key_id: record.keyId,
    project_id: record.projectId,
    endpoint: record.endpoint,
    requested_model: record.requestedModel,
    model: record.model,
    provider: record.provider,
    status: record.status,
    http_status: record.httpStatus,
    error_code: record.errorCode,
    error_message: record.errorMessage,
    stream: dialect.bool(record.stream),
    prompt_tokens: record.promptTokens,
    completion_tokens: record.completionTokens,
    cached_tokens: record.cachedTokens,
    cost_micros: record.costMicros,
    saved_micros: record.savedMicros,
    overrun_micros: record.overrunMicros ?? 0,
    waived: record.waived,
    byok: dialect.bool(record.byok),
    cache_hit: dialect.bool(record.cacheHit),
    preset: record.preset,
    ttft_ms: record.ttftMs,
    duration_ms: record.durationMs,
    finish_reason: record.finishReason,
    attempts: record.attempts,
    routing_failures: JSON.stringify(record.routingFailures),
    attachments: JSON.stringify(record.attachments),
    guardrails: JSON.stringify(record.guardrails),
    metadata: JSON.stringify(record.metadata),
    created_at: record.createdAt,
  };
}

/** A `request_records` row as a {@link RequestRecord}: the one place its JSON columns are read. */
export function mapRequestRecord(row: Selectable<RequestRecordsTable>): RequestRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.key_id,
    projectId: row.project_id,
    endpoint: row.endpoint,
    requestedModel: row.requested_model,
    model: row.model,
    provider: row.provider,
    status: row.status as RequestStatus,
    httpStatus: toInteger(row.http_status),
    errorCode: row.error_code,
    errorMessage: row.error_message,
    stream: toBoolean(row.stream),
    promptTokens: toInteger(row.prompt_tokens),
    completionTokens: toInteger(row.completion_tokens),
    cachedTokens: toInteger(row.cached_tokens),
    costMicros: toInteger(row.cost_micros),
    savedMicros: toInteger(row.saved_micros),
    overrunMicros: toInteger(row.overrun_micros),
    waived: row.waived,
    byok: toBoolean(row.byok),
    cacheHit: toBoolean(row.cache_hit),
    preset: row.preset,
    ttftMs: toNullableInteger(row.ttft_ms),
    durationMs: toNullableInteger(row.duration_ms),
    finishReason: row.finish_reason,
    attempts: toInteger(row.attempts),
    routingFailures: JSON.parse(row.routing_failures) as RoutingFailure[],
    attachments: JSON.parse(row.attachments) as Record<string, number>,
    guardrails: JSON.parse(row.guardrails) as GuardrailVerdict[],
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    createdAt: toInteger(row.created_at),
  };
}

/** A `byok_keys` row as a {@link ByokKey}; the sealed key is passed through as stored. */
export function mapByokKey(row: Selectable<ByokKeysTable>): ByokKey {
  return {
    id: row.id,
    accountId: row.account_id,
    provider: row.provider,
    label: row.label,
    allowFallback: toBoolean(row.allow_fallback),
    sealedKey: row.sealed_key,
    createdAt: toInteger(row.created_at),
  };
}

/** A `presets` row as a {@link Preset}: the one place its JSON `config` is read. */
export function mapPreset(row: Selectable<PresetsTable>): Preset {
  return {
    accountId: row.account_id,
    name: row.name,
    description: row.description,
    config: JSON.parse(row.config) as Record<string, unknown>,
    createdAt: toInteger(row.created_at),
    updatedAt: toInteger(row.updated_at),
  };
}

/** A `response_cache` row as a {@link CachedResponse}. */
export function mapCachedResponse(row: Selectable<ResponseCacheTable>): CachedResponse {
  return {
    accountId: row.account_id,
    lookupId: row.lookup_id,
    sealedBody: row.sealed_body,
    createdAt: toInteger(row.created_at),
    expiresAt: toInteger(row.expires_at),
  };
}

/** A `guardrails` row as a {@link Guardrail}. */
export function mapGuardrail(row: Selectable<GuardrailsTable>): Guardrail {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    stage: row.stage as Guardrail['stage'],
    category: row.category as Guardrail['category'],
    pattern: row.pattern,
    createdAt: toInteger(row.created_at),
  };
}
