import { type EpochMs, type Micros, newId, type SettleInput, utcDayStart } from '@tollgate/core';
import { insertLedgerEntry, moveBalance } from './ledger-queries.js';
import { prepareQuery } from './prepared-query.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { writeRecord } from './request-record-queries.js';
import { requestRecordRow, toInteger } from './row-mappers.js';

/**
 * `Storage.settleRequest`, in one write transaction:
 * 1. write the request record, over its `in_progress` record if the reserve wrote one (a second
 *    settle of the request fails here, on a finished record of the same id, before anything else);
 * 2. delete the hold, if any;
 * 3. with a charge: `UPDATE accounts … RETURNING` the new balance, which takes the account's row
 *    lock; insert ONE `charge` ledger entry (negative amount, the request id, the balance after);
 *    add the amount to the key's spend, and to its spend of the UTC day the hold was taken in
 *    (`key_day_spend`; the settle's own day without a hold), so a hold taken before a window's
 *    boundary is charged to the window it was counted in. Without one: read the balance.
 * The account's lock comes last, so on Postgres concurrent settles and reserves of one account
 * queue for it only for the statements that need it. Reserving reads the holds and the key's spend
 * under that lock: until this transaction commits it sees the hold and the old spend and balance
 * together, as if the settle had not begun, and after it the charge alone; never a mix. No writer
 * takes a hold's row lock after an account's, so the order cannot deadlock.
 * The record's primary key and the ledger's one-charge-per-request unique index both refuse a
 * second settle, and any failure rolls back every step, so the hold is still there for the caller
 * to release and nothing was charged.
 * Where the adapter brings its own metering path (Postgres), the same rule runs as SQL instead, in
 * one round trip: `tollgate_settle_batch` for a batch, `tollgate_settle_request` for a call alone
 * (storage-postgres's `sql/functions/`). `test/metering-differential.test.ts` runs both on the same
 * random operations and requires the same answers and the same state.
 */
export async function settleRequest(
  ctx: QueryContext,
  input: SettleInput,
): Promise<{ balanceMicros: Micros }> {
  const { record, charge, reservationId } = input;
  checkCharge(charge);
  const recordRow = requestRecordRow(record, ctx.dialect);
  const accountId = record.accountId;

  return write(ctx, async (trx) => {
    await writeRecord(ctx, recordRow, trx);
    const hold =
      reservationId === null ? undefined : await deleteHold.first(ctx, { reservationId, accountId }, trx);
    if (charge === null) {
      const account = await balanceOf.first(ctx, { accountId }, trx);
      if (!account) throw new Error(`account ${accountId} does not exist`);
      return { balanceMicros: toInteger(account.balance_micros) };
    }

    const now = ctx.now();
    const updated = await moveBalance.first(ctx, { accountId, amount: -charge.amountMicros }, trx);
    if (!updated) throw new Error(`account ${accountId} does not exist`);
    const balanceMicros = toInteger(updated.balance_micros);
    await insertLedgerEntry.first(
      ctx,
      {
        id: newId('led'),
        account_id: accountId,
        amount_micros: -charge.amountMicros,
        balance_after_micros: balanceMicros,
        kind: 'charge',
        description: charge.description,
        request_id: record.id,
        key_id: charge.keyId,
        created_at: now,
      },
      trx,
    );
    if (charge.keyId !== null) {
      const key = await addKeySpend.first(
        ctx,
        { keyId: charge.keyId, accountId, amount: charge.amountMicros },
        trx,
      );
      if (!key) throw new Error(`key ${charge.keyId} is not a key of account ${accountId}`);
      // Throws (and so rolls back) should the spend ever leave the safe-integer range.
      toInteger(key.spent_micros);
      const heldAt: EpochMs = hold ? toInteger(hold.created_at) : now;
      await addDaySpend.run(
        ctx,
        { key_id: charge.keyId, day_start: utcDayStart(heldAt), spent_micros: charge.amountMicros },
        trx,
      );
    }
    return { balanceMicros };
  });
}

/** Throws on a charge no settle accepts (the native settle checks the same). */
export function checkCharge(charge: SettleInput['charge']): void {
  if (charge === null) return;
  assertInteger('charge.amountMicros', charge.amountMicros);
  if (charge.amountMicros <= 0) throw new RangeError('a charge must be a positive number of micros');
}

const balanceOf = prepareQuery((db, p: { accountId: string }) =>
  db.selectFrom('accounts').select('balance_micros').where('id', '=', p.accountId),
);

/** Deletes the hold, answering when it was taken (the day its charge counts in). */
const deleteHold = prepareQuery((db, p: { reservationId: string; accountId: string }) =>
  db
    .deleteFrom('credit_reservations')
    .where('id', '=', p.reservationId)
    .where('account_id', '=', p.accountId)
    .returning('created_at'),
);

/** Adds a charge to its key's spend of one UTC day (the day's row created by its first charge). */
const addDaySpend = prepareQuery((db, row: { key_id: string; day_start: EpochMs; spent_micros: Micros }) =>
  db
    .insertInto('key_day_spend')
    .values({ key_id: row.key_id, day_start: row.day_start, spent_micros: row.spent_micros })
    .onConflict((oc) =>
      oc.columns(['key_id', 'day_start']).doUpdateSet((eb) => ({
        spent_micros: eb(
          'key_day_spend.spent_micros',
          '+',
          eb.ref('excluded.spent_micros'),
        ).$castTo<number>(),
      })),
    ),
);

const addKeySpend = prepareQuery((db, p: { keyId: string; accountId: string; amount: Micros }) =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ spent_micros: eb('spent_micros', '+', p.amount).$castTo<number>() }))
    .where('id', '=', p.keyId)
    .where('account_id', '=', p.accountId)
    .returning('spent_micros'),
);
