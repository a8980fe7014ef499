import type { QueryContext } from '@tollgate/storage-kysely';
import { CompiledQuery } from 'kysely';
import type { CallOutcome } from './group-commit-queue.js';

/** What every row of a batch function answers besides its result. */
export interface BatchRow {
  ord: number;
  error: string | null;
  code: string | null;
}

/**
 * A batch function's SQL (its calls as the one `jsonb` parameter), and what to do with the same
 * calls should that statement fail: it then wrote nothing, and `perCall` answers each call's own
 * outcome (the per-call functions, or each call on its own).
 */
export interface BatchSql<Row> {
  batch: string;
  perCall: string | ((calls: readonly object[]) => Promise<(Row & BatchRow)[]>);
}

/**
 * Appended to a statement that settles nothing: its transaction alone commits with
 * `synchronous_commit = off`, so it does not wait for its WAL to reach the disk (an fdatasync on
 * the server, which its caller would otherwise wait for).
 *
 * What it writes is a hold, the request's `in_progress` record and rate-limit hits (these on an
 * UNLOGGED table, which a crash of the server empties anyway). Money never moves in it: a charge,
 * a top-up and every other ledger entry commit in statements that wait for their flush, and the WAL
 * is flushed in order, so once a charge is durable every hold taken before it is too. Only a crash
 * of the database server itself (not of a gateway) can lose such a commit, and only one of its last
 * moments (at most three `wal_writer_delay`s, 600 ms by default): the holds of the requests then in
 * flight. A settle of such a request that reaches the restarted server still lands once, charging
 * in full (a settle writes the record whether or not its `in_progress` one is there, and deleting a
 * hold that is gone deletes nothing); until it does, its account's available credit, key spend and
 * month ceiling leave its hold out, as they would for a request that had not started.
 *
 * A volatile function in the FROM list runs when the statement's rows are made, and a setting made
 * with `is_local` lasts until the transaction ends: the commit that follows the statement is the
 * one it applies to. A batch that answers no row would leave it unset, and commit as any other.
 */
export const WITHOUT_FLUSH_WAIT = " cross join set_config('synchronous_commit', 'off', true)";

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
    // Alone, a call costs less through the per-call path; from two calls on, the set-based statement
    // costs less per call.
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
