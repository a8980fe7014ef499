import type { Account, ApiKey, LedgerEntry, Project } from '@tollgate/core';
import type { Selectable } from 'kysely';
import type { AccountsTable, ApiKeysTable, LedgerEntriesTable, ProjectsTable } from './database.js';

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
    rateLimitRpm: toNullableInteger(row.rate_limit_rpm),
    spentMicros: toInteger(row.spent_micros),
    disabled: toBoolean(row.disabled),
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
