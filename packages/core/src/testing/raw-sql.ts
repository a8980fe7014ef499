import type { ConformanceContext } from './storage-harness.js';

/** A SQL string literal (both dialects double the quote); ids come from the storage, but be safe. */
export function sqlText(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** int8 arrives as a string from pg and as a number or bigint elsewhere; the suite compares numbers. */
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint' || typeof value === 'string') return Number(value);
  throw new Error(`expected a numeric column value, got ${typeof value}: ${String(value)}`);
}

export function toNumberOrNull(value: unknown): number | null {
  return value === null ? null : toNumber(value);
}

/** SQLite stores booleans as 0/1, Postgres as true/false (some drivers as 't'/'f'). */
export function toBoolean(value: unknown): boolean {
  if (value === true || value === 1 || value === '1' || value === 't' || value === 'true') return true;
  if (value === false || value === 0 || value === '0' || value === 'f' || value === 'false') return false;
  if (typeof value === 'bigint') return value !== 0n;
  throw new Error(`expected a boolean column value, got ${typeof value}: ${String(value)}`);
}

/** The single row a query returns; fails the test when there is not exactly one. */
export async function rawOne(ctx: ConformanceContext, sql: string): Promise<Record<string, unknown>> {
  const rows = await ctx.raw(sql);
  if (rows.length !== 1) throw new Error(`expected exactly one row from ${sql}, got ${rows.length}`);
  return rows[0]!;
}

/** `SELECT count(*)` of a table, optionally filtered by a raw `WHERE` clause. */
export async function rawCount(ctx: ConformanceContext, table: string, where?: string): Promise<number> {
  const row = await rawOne(ctx, `SELECT count(*) AS n FROM ${table}${where ? ` WHERE ${where}` : ''}`);
  return toNumber(row.n);
}

/** Σ amount_micros of an account's ledger rows, straight from the table. */
export async function rawLedgerSum(ctx: ConformanceContext, accountId: string): Promise<number> {
  const row = await rawOne(
    ctx,
    `SELECT COALESCE(SUM(amount_micros), 0) AS total FROM ledger_entries WHERE account_id = ${sqlText(accountId)}`,
  );
  return toNumber(row.total);
}

/** The cached balance column of an account, straight from the table. */
export async function rawBalance(ctx: ConformanceContext, accountId: string): Promise<number> {
  const row = await rawOne(ctx, `SELECT balance_micros FROM accounts WHERE id = ${sqlText(accountId)}`);
  return toNumber(row.balance_micros);
}
