import {
  type Micros,
  newId,
  type ReserveCreditInput,
  type ReserveCreditResult,
  type SettleInput,
} from '@tollgate/core';
import {
  checkCharge,
  checkReserveInput,
  type HitParams,
  hitParams,
  type MeteringPath,
  mapReservation,
  type QueryContext,
  type Refusal,
  rateLimited,
  requestRecordRow,
  toInteger,
  utcMonthContaining,
} from '@tollgate/storage-kysely';
import { CompiledQuery } from 'kysely';
import {
  type BatchRow,
  type BatchSql,
  callsJson,
  isStatementError,
  outcomesOf,
  sendBatch,
  WITHOUT_FLUSH_WAIT,
} from './batch-statement.js';
import { type CallOutcome, GroupCommitQueue } from './group-commit-queue.js';
import { countEachAlone, createHitQueue, hitsJson } from './rate-limit-hit-queue.js';

/*
 * Postgres's metering path (storage-kysely's `MeteringPath`): `reserveCredit`, `settleRequest` and a
 * record written alone run as the server-side functions of `sql/functions/`, committed in groups:
 * the calls made in one turn of the event loop, reserves and settles together, go out as ONE
 * statement (`GroupCommitQueue`, one batch in flight): the set-based `tollgate_meter_batch`, or with
 * calls of one kind only `tollgate_reserve_batch` / `tollgate_settle_batch`. One statement outside a
 * transaction is its own transaction, so a batch is one round trip and one COMMIT, and a caller hears
 * back only once it committed. Should a set-based statement fail (it wrote nothing), the calls go
 * again, per kind, to `tollgate_reserve_credits` / `tollgate_settle_requests`, which run each call
 * through the single-call function in its own subtransaction: a call that fails is rolled back alone
 * and its caller gets the error (same message, and its SQLSTATE as `code`) the single-call statement
 * would have raised. A lone call goes there directly. A reserve may carry its request's rate-limit
 * hit: its batch is then `tollgate_meter_batch_with_hits`, which counts the hits first (a lone model
 * call's hit and hold are one round trip); a hit on its own goes to the hits queue
 * (`rate-limit-hit-queue.ts`).
 * The checks of the input, the ids and the clock stay here, as in the kysely path; the fixed SQL
 * text runs as a named prepared statement where the adapter prepares them (`PreparingClient`).
 */

/** One `tollgate_reserve_credit` call: its parameters, without the `p_`. */
interface ReserveCall {
  account_id: string;
  key_id: string;
  amount: number;
  now: number;
  month_start: number;
  hold_id: string;
  request_id: string | undefined;
  expires_at: number;
  record: object | null;
}

/** One `tollgate_settle_request` call: its parameters, without the `p_`. */
interface SettleCall {
  record: object;
  account_id: string;
  request_id: string;
  reservation_id: string | null;
  amount: number | null;
  ledger_id: string | null;
  description: string | null;
  key_id: string | null;
  created_at: number;
}

interface ReserveRow {
  refusal: string | null;
  balance: unknown;
  available: unknown;
}

/**
 * Each batch goes first to the set-based function and, should that statement fail (it then wrote
 * nothing), again to the per-call one, which runs every call in its own subtransaction and so answers
 * each call's own error. Reserves only: neither waits for its WAL flush.
 */
const RESERVE_SQL: BatchSql<ReserveRow> = {
  batch: `select ord, refusal, balance, available, error, code from tollgate_reserve_batch($1::jsonb)${WITHOUT_FLUSH_WAIT}`,
  perCall: `select ord, refusal, balance, available, error, code from tollgate_reserve_credits($1::jsonb)${WITHOUT_FLUSH_WAIT}`,
};
const SETTLE_SQL: BatchSql<{ balance: unknown }> = {
  batch: 'select ord, balance, error, code from tollgate_settle_batch($1::jsonb)',
  perCall: 'select ord, balance, error, code from tollgate_settle_requests($1::jsonb)',
};

/** The metering path of one storage, with its queues (`KyselyStorageOptions.metering`). */
export function createPostgresMetering(ctx: QueryContext): MeteringPath {
  const meter = new GroupCommitQueue<MeterCall, unknown>(
    (calls) => sendMeterBatch(ctx, calls),
    (call) => call.call.account_id,
  );
  const hits = createHitQueue(ctx);
  return {
    reserveCredit: (input) => reserveCredit(ctx, meter, input),
    settleRequest: (input) => settleRequest(ctx, meter, input),
    countRateLimitHit: (_ctx, params) => hits.add(params),
    drain: () => Promise.all([meter.drain(), hits.drain()]).then(() => undefined),
  };
}

/** A call of the one metering queue: the reserves and the settles of a turn go out together. */
type MeterCall =
  | { kind: 'reserve'; call: ReserveCall; hit: HitParams | null }
  | { kind: 'settle'; call: SettleCall };

const METER_SQL =
  'select kind, ord, refusal, balance, available, error, code from tollgate_meter_batch($1::jsonb, $2::jsonb)';
const METER_WITH_HITS_SQL =
  'select kind, ord, refusal, balance, available, error, code from tollgate_meter_batch_with_hits($1::jsonb, $2::jsonb, $3::jsonb)';
/** {@link METER_WITH_HITS_SQL} for a batch of reserves alone (no settle), without waiting for its WAL flush. */
const HOLDS_WITH_HITS_SQL = METER_WITH_HITS_SQL + WITHOUT_FLUSH_WAIT;

/**
 * One batch of the queue (`sendMeterCalls`). Answers a reserve's row or a settle's balance per
 * call, in the order of `calls`. When reserves carry their requests' rate-limit hits, the batch is
 * one statement that counts them first; should it fail (it wrote nothing), each hit is counted on its
 * own, a reserve whose hit was refused is answered so, and the rest go again without hits.
 */
async function sendMeterBatch(
  ctx: QueryContext,
  calls: readonly MeterCall[],
): Promise<CallOutcome<unknown>[]> {
  const hits = calls.flatMap((c, at) => (c.kind === 'reserve' && c.hit ? [{ at, hit: c.hit }] : []));
  try {
    return await sendMeterCalls(ctx, calls);
  } catch (error) {
    // Without hits the batch has had its fallback. With them it wrote nothing: each hit on its own,
    // then the batch without them.
    if (hits.length === 0 || !isStatementError(error)) throw error;
  }
  const out: CallOutcome<unknown>[] = new Array(calls.length);
  const rest: { at: number; call: MeterCall }[] = [];
  const counted = outcomesOf(
    await countEachAlone(
      ctx,
      hits.map((h) => h.hit),
    ),
    hits.length,
  );
  hits.forEach(({ at }, i) => {
    const outcome = counted[i]!;
    if (!outcome.ok) out[at] = outcome;
    else if (!outcome.value.counted) out[at] = { ok: true, value: HIT_REFUSED_ROW };
  });
  calls.forEach((call, at) => {
    if (out[at] === undefined)
      rest.push({ at, call: call.kind === 'reserve' ? { ...call, hit: null } : call });
  });
  const outcomes = await sendMeterCalls(
    ctx,
    rest.map((r) => r.call),
  );
  rest.forEach(({ at }, i) => {
    out[at] = outcomes[i]!;
  });
  return out;
}

/** The answer of a reserve whose rate-limit hit was not counted. */
const HIT_REFUSED_ROW: ReserveRow = { refusal: 'rate_limited', balance: null, available: null };

/**
 * The batch's calls as ONE statement where they are of both kinds (`tollgate_meter_batch`: every
 * account locked first, the settles, then the reserves, one COMMIT) or carry rate-limit hits
 * (`tollgate_meter_batch_with_hits`, which counts them first, sorted by subject;
 * its failure is the caller's to handle); else each kind through its own batch function.
 */
async function sendMeterCalls(
  ctx: QueryContext,
  calls: readonly MeterCall[],
): Promise<CallOutcome<unknown>[]> {
  const settles = calls.flatMap((c, at) => (c.kind === 'settle' ? [{ at, call: c.call }] : []));
  const reserves = calls.flatMap((c, at) => (c.kind === 'reserve' ? [{ at, call: c.call, hit: c.hit }] : []));
  const withHits = reserves.some((r) => r.hit !== null);
  const out: CallOutcome<unknown>[] = new Array(calls.length);
  const place = <Row>(part: { at: number }[], outcomes: CallOutcome<Row>[], value: (row: Row) => unknown) =>
    part.forEach(({ at }, i) => {
      const outcome = outcomes[i]!;
      out[at] = outcome.ok ? { ok: true, value: value(outcome.value) } : outcome;
    });
  const settleCalls = settles.map((s) => s.call);
  const reserveCalls = reserves.map((r) => r.call);
  const balance = (row: { balance: unknown }) => row.balance;
  const asRow = (row: ReserveRow) => row;
  if (withHits || (settles.length > 0 && reserves.length > 0)) {
    try {
      const { rows } = await ctx.db.executeQuery<ReserveRow & BatchRow & { kind: string }>(
        withHits
          ? CompiledQuery.raw(settles.length > 0 ? METER_WITH_HITS_SQL : HOLDS_WITH_HITS_SQL, [
              hitsJson(reserves),
              callsJson(settleCalls),
              callsJson(reserveCalls),
            ])
          : CompiledQuery.raw(METER_SQL, [callsJson(settleCalls), callsJson(reserveCalls)]),
      );
      place(
        settles,
        outcomesOf(
          rows.filter((row) => row.kind === 'settle'),
          settles.length,
        ),
        balance,
      );
      place(
        reserves,
        outcomesOf(
          rows.filter((row) => row.kind === 'reserve'),
          reserves.length,
        ),
        asRow,
      );
      return out;
    } catch (error) {
      // It wrote nothing: each kind again, through its own functions (and their fallback).
      if (withHits || !isStatementError(error)) throw error;
    }
  }
  if (settles.length > 0) place(settles, await sendBatch(ctx, SETTLE_SQL, settleCalls), balance);
  if (reserves.length > 0) place(reserves, await sendBatch(ctx, RESERVE_SQL, reserveCalls), asRow);
  return out;
}

/** `Storage.reserveCredit`: one call of the next reserve batch. */
async function reserveCredit(
  ctx: QueryContext,
  queue: GroupCommitQueue<MeterCall, unknown>,
  input: ReserveCreditInput,
): Promise<ReserveCreditResult> {
  checkReserveInput(input);
  const { accountId, keyId, amountMicros, now } = input;
  const hit = input.rateLimit ? hitParams(input.rateLimit) : null;
  const month = utcMonthContaining(now);
  const hold = {
    id: newId('res'),
    account_id: accountId,
    key_id: keyId,
    request_id: input.requestId,
    amount_micros: amountMicros,
    created_at: now,
    expires_at: now + input.ttlMs,
  };
  const record = input.record
    ? requestRecordRow({ ...input.record, status: 'in_progress' }, ctx.dialect)
    : null;
  const row = (await queue.add({
    kind: 'reserve',
    call: {
      account_id: accountId,
      key_id: keyId,
      amount: amountMicros,
      now,
      month_start: month.start,
      hold_id: hold.id,
      request_id: hold.request_id,
      expires_at: hold.expires_at,
      record,
    },
    hit,
  })) as ReserveRow;
  if (row.refusal === 'rate_limited') return rateLimited(ctx, input);
  if (row.refusal !== null) {
    return {
      ok: false,
      reason: row.refusal as Refusal['reason'],
      balanceMicros: toInteger(row.balance),
      availableMicros: toInteger(row.available),
    };
  }
  return { ok: true, reservation: mapReservation(hold) };
}

/** `Storage.settleRequest`: one call of the next settle batch. */
async function settleRequest(
  ctx: QueryContext,
  queue: GroupCommitQueue<MeterCall, unknown>,
  input: SettleInput,
): Promise<{ balanceMicros: Micros }> {
  const { record, charge, reservationId } = input;
  checkCharge(charge);
  const balance = await queue.add({
    kind: 'settle',
    call: {
      record: requestRecordRow(record, ctx.dialect),
      account_id: record.accountId,
      request_id: record.id,
      reservation_id: reservationId,
      amount: charge?.amountMicros ?? null,
      ledger_id: charge ? newId('led') : null,
      description: charge?.description ?? null,
      key_id: charge?.keyId ?? null,
      created_at: ctx.now(),
    },
  });
  return { balanceMicros: toInteger(balance) };
}
