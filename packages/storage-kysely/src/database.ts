import type {
  BatchEndpoint,
  BatchItemState,
  BatchStatus,
  KeyEnv,
  KeyScope,
  LedgerKind,
  LimitReset,
} from '@tollgate/core';
import type { ColumnType } from 'kysely';

/**
 * A BIGINT (money in micros, epoch milliseconds) as drivers return it: a number from better-sqlite3
 * and PGlite, a string from pg (which never parses int8). Always written as a safe-integer number;
 * the row mappers turn what comes back into a number.
 */
export type Int8 = ColumnType<number | string | bigint, number, number>;
/** A nullable BIGINT, read and written like {@link Int8}. */
export type NullableInt8 = ColumnType<number | string | bigint | null, number | null, number | null>;
/** How a boolean may be bound: SQLite cannot bind a JS boolean, Postgres wants one. */
export type DbBoolean = boolean | 0 | 1;
/** A flag: 0/1 from SQLite, a boolean from Postgres; written with `DialectCapabilities.bool`. */
export type BooleanColumn = ColumnType<boolean | number, DbBoolean, DbBoolean>;
/** A nullable flag. */
export type NullableBooleanColumn = ColumnType<boolean | number | null, DbBoolean | null, DbBoolean | null>;

/** `accounts`: one row per customer; `balance_micros` is the cached Σ of its ledger. */
export interface AccountsTable {
  id: string;
  name: string;
  balance_micros: Int8;
  monthly_limit_micros: NullableInt8;
  default_rpm: number | null;
  suspended: BooleanColumn;
  created_at: Int8;
}

/** `projects`: a named grouping of an account's keys. */
export interface ProjectsTable {
  id: string;
  account_id: string;
  name: string;
  created_at: Int8;
}

/** `api_keys`: only the SHA-256 hash of a key is stored, never the key. */
export interface ApiKeysTable {
  id: string;
  account_id: string;
  project_id: string | null;
  name: string;
  scope: KeyScope;
  env: KeyEnv;
  key_hash: string;
  prefix: string;
  spend_limit_micros: NullableInt8;
  rate_limit_rpm: number | null;
  spent_micros: Int8;
  disabled: BooleanColumn;
  /** Added by migration 0024, with the two below; each may be left out of an insert. */
  revoked: ColumnType<boolean | number, DbBoolean | undefined, DbBoolean>;
  expires_at: ColumnType<number | string | bigint | null, number | null | undefined, number | null>;
  oauth_client_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Added by migration 0004: the window the cap applies to, `NULL` for the lifetime. */
  limit_reset: ColumnType<LimitReset | null, LimitReset | null | undefined, LimitReset | null>;
  created_at: Int8;
}

/** `ledger_entries`: append-only (database triggers reject UPDATE and DELETE). */
export interface LedgerEntriesTable {
  id: string;
  account_id: string;
  amount_micros: Int8;
  balance_after_micros: Int8;
  kind: LedgerKind;
  description: string;
  request_id: string | null;
  key_id: string | null;
  created_at: Int8;
}

/**
 * `account_month_charges`: per account and UTC month (`month_start`, its first
 * epoch ms), the sum of that month's `charge` entries, negative like them. Kept by a trigger on
 * `ledger_entries`; never written by the queries.
 */
export interface AccountMonthChargesTable {
  account_id: string;
  month_start: Int8;
  charge_total_micros: Int8;
}

/**
 * `key_day_spend` (migration 0004): what a key was charged per UTC day, the charge counted in the day
 * its hold was taken. A window's spend is the sum of its days, so no row is ever reset.
 */
export interface KeyDaySpendTable {
  key_id: string;
  day_start: Int8;
  spent_micros: Int8;
}

/** `request_records`: one row per request (never its content); JSON columns are TEXT. */
export interface RequestRecordsTable {
  id: string;
  account_id: string;
  key_id: string | null;
  project_id: string | null;
  endpoint: string;
  requested_model: string | null;
  model: string | null;
  provider: string | null;
  status: string;
  http_status: number;
  error_code: string | null;
  error_message: string | null;
  stream: BooleanColumn;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost_micros: Int8;
  saved_micros: Int8;
  /** What usage beyond the hold would have cost and was not charged (a charge never exceeds its hold). */
  overrun_micros: Int8;
  /** Why a zero cost is zero (`byok`, `zero_completion`, …), else NULL. */
  waived: string | null;
  byok: BooleanColumn;
  cache_hit: BooleanColumn;
  /** The preset the request named, else NULL. */
  preset: string | null;
  ttft_ms: number | null;
  duration_ms: number | null;
  finish_reason: string | null;
  attempts: number;
  routing_failures: string;
  attachments: string;
  guardrails: string;
  metadata: string;
  created_at: Int8;
}

/** `credit_reservations`: worst-case holds on a balance while a request is in flight. */
export interface CreditReservationsTable {
  id: string;
  account_id: string;
  key_id: string | null;
  request_id: string | null;
  amount_micros: Int8;
  created_at: Int8;
  expires_at: Int8;
}

/** `idempotency_claims`: one per (account, `Idempotency-Key`). */
export interface IdempotencyClaimsTable {
  account_id: string;
  idem_key: string;
  state: 'in_flight' | 'completed';
  request_id: string;
  response_status: number | null;
  response_body: string | null;
  created_at: Int8;
  expires_at: Int8;
}

/** `rate_limit_windows`: a request counter per subject and fixed window. */
export interface RateLimitWindowsTable {
  subject: string;
  window_start: Int8;
  count: number;
}

/** `health_probe`: one row (id 1) that `probeWrite` upserts; its time of the last probe. */
export interface HealthProbeTable {
  id: number;
  probed_at: Int8;
}

/** `byok_keys`: an account's own provider keys, stored sealed (never in clear). */
export interface ByokKeysTable {
  id: string;
  account_id: string;
  provider: string;
  label: string | null;
  allow_fallback: BooleanColumn;
  sealed_key: string;
  created_at: Int8;
}

/** `presets`: named request configuration, one per (account, name); `config` is a JSON object as TEXT. */
export interface PresetsTable {
  account_id: string;
  name: string;
  description: string | null;
  config: string;
  created_at: Int8;
  updated_at: Int8;
}

/** `response_cache`: one sealed answer per (account, lookup id), live while `expires_at > now`. */
export interface ResponseCacheTable {
  account_id: string;
  lookup_id: string;
  sealed_body: string;
  created_at: Int8;
  expires_at: Int8;
}

/** `batches`: one row per batch with its counts; `metadata` is a JSON object as TEXT, or NULL. */
export interface BatchesTable {
  id: string;
  account_id: string;
  api_key_id: string;
  endpoint: BatchEndpoint;
  status: BatchStatus;
  total: number;
  completed: number;
  failed: number;
  metadata: string | null;
  created_at: Int8;
  in_progress_at: NullableInt8;
  completed_at: NullableInt8;
  cancelled_at: NullableInt8;
}

/** `batch_items`: one row per item of a batch, keyed by (batch, index), with its worker's lease. */
export interface BatchItemsTable {
  batch_id: string;
  idx: number;
  custom_id: string;
  request_id: string;
  sealed_body: string;
  state: BatchItemState;
  lease_owner: string | null;
  lease_until: NullableInt8;
  attempts: number;
  sealed_result: string | null;
  finished_at: NullableInt8;
}

/** `oauth_clients`: an account's OAuth clients; `redirect_uris` is a JSON array as TEXT, the secret only hashed. */
export interface OAuthClientsTable {
  id: string;
  account_id: string;
  name: string;
  redirect_uris: string;
  secret_hash: string;
  created_at: Int8;
}

/** `oauth_codes`: approved authorization codes, by the SHA-256 of the code (never the code). */
export interface OAuthCodesTable {
  code_hash: string;
  client_id: string;
  account_id: string;
  redirect_uri: string;
  code_challenge: string;
  spend_limit_micros: NullableInt8;
  created_at: Int8;
  expires_at: Int8;
  used_at: NullableInt8;
  key_id: string | null;
}

/** `guardrails`: an account's rules; `pattern` only for `regex` and `keyword`. */
export interface GuardrailsTable {
  id: string;
  account_id: string;
  name: string;
  stage: string;
  category: string;
  pattern: string | null;
  created_at: Int8;
}

/** The whole schema as kysely sees it. Table and column names are a contract (raw-SQL tests read them). */
export interface Database {
  accounts: AccountsTable;
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  ledger_entries: LedgerEntriesTable;
  account_month_charges: AccountMonthChargesTable;
  key_day_spend: KeyDaySpendTable;
  request_records: RequestRecordsTable;
  credit_reservations: CreditReservationsTable;
  idempotency_claims: IdempotencyClaimsTable;
  rate_limit_windows: RateLimitWindowsTable;
  health_probe: HealthProbeTable;
  byok_keys: ByokKeysTable;
  presets: PresetsTable;
  response_cache: ResponseCacheTable;
  batches: BatchesTable;
  batch_items: BatchItemsTable;
  oauth_clients: OAuthClientsTable;
  oauth_codes: OAuthCodesTable;
  guardrails: GuardrailsTable;
}
