import { CompiledQuery } from 'kysely';
import type { CallOutcome } from './group-commit-queue.js';
import type { QueryContext } from './query-context.js';

/** What every row of a batch function answers besides its result. */
export interface BatchRow {
  ord: number;
  error: string | null;
  code: string | null;
}

/**
 * A batch function's SQL (its calls as the one `jsonb` parameter), and what to do with the same
 * calls should that statement fail: it then wrote nothing, and `perCall` answers each call's own
 * outcome (the per-call functions of migration 0011, or each call on its own).
 */
export interface BatchSql<Row> {
  batch: string;
  perCall: string | ((calls: readonly object[]) => Promise<(Row & BatchRow)[]>);
}

/**
 * Runs one batch function on `calls` and answers each call's row, or the error it failed with, in
 * the order of `calls`.
 */
export async function sendBatch<Row>(
  ctx: QueryContext,
  sql: BatchSql<Row>,
  calls: readonly object[],
): Promise<CallOutcome<Row>[]> {
  const parameters = [callsJson(calls)];
  const perCall = async () =>
    typeof sql.perCall === 'string'
      ? (await ctx.db.executeQuery<Row & BatchRow>(CompiledQuery.raw(sql.perCall, parameters))).rows
      : await sql.perCall(calls);
  let rows: (Row & BatchRow)[];
  if (calls.length === 1) {
    // Alone, a call costs less through the per-call path (measured: a settle ~0.8 ms against ~1.2
    // ms set-based on this machine); from two calls on the set-based statement costs less per call.
    rows = await perCall();
  } else {
    try {
      ({ rows } = await ctx.db.executeQuery<Row & BatchRow>(CompiledQuery.raw(sql.batch, parameters)));
    } catch (error) {
      if (!isStatementError(error)) throw error;
      rows = await perCall();
    }
  }
  return outcomesOf(rows, calls.length);
}

/** Each of `count` calls' outcome from the rows a batch function answered (by `ord`). */
export function outcomesOf<Row>(rows: readonly (Row & BatchRow)[], count: number): CallOutcome<Row>[] {
  const outcomes: CallOutcome<Row>[] = new Array(count);
  for (const row of rows) {
    outcomes[row.ord] =
      row.error === null
        ? { ok: true, value: row }
        : { ok: false, error: Object.assign(new Error(row.error), { code: row.code }) };
  }
  for (let i = 0; i < count; i++) {
    outcomes[i] ??= { ok: false, error: new Error(`the batch returned no row for call ${i}`) };
  }
  return outcomes;
}

/**
 * An error the statement raised (it rolled back and wrote nothing), as opposed to a lost connection
 * or a shut-down server (SQLSTATE classes 08 and 57), after which whether it committed is unknown.
 */
export function isStatementError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|57)/.test(code);
}

/**
 * The calls as the batch functions' `jsonb` parameter. `jsonb` text cannot hold U+0000, and refuses
 * a lone UTF-16 surrogate's `\udXXX` escape: either would fail (and so leave uncharged) the settle of
 * a record naming one, say in an upstream's error message. Both become U+FFFD first, which is what
 * the driver's UTF-8 encoding of a text parameter makes of a lone surrogate on the kysely path.
 */
export function callsJson(calls: readonly object[]): string {
  // JSON.stringify writes both as `\u` escapes: only a text that has one pays for the replacer.
  const text = JSON.stringify(calls);
  if (!UNSTORABLE_ESCAPE.test(text)) return text;
  return JSON.stringify(calls, (_, value) =>
    typeof value === 'string' ? value.replace(UNSTORABLE, '\uFFFD') : value,
  );
}
const UNSTORABLE_ESCAPE = /\\u(0000|d[89a-f])/i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what must be replaced.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
