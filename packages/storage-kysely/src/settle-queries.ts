import { type Micros, newId, type SettleInput } from '@tollgate/core';
import { insertLedgerEntry, moveBalance } from './ledger-queries.js';
import { prepareQuery } from './prepared-query.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { insertRecord } from './request-record-queries.js';
import { requestRecordRow, toInteger } from './row-mappers.js';

/**
 * `Storage.settleRequest`, in one write transaction that first locks the account row (as reserving
 * does, so a settle and a reserve of one account never interleave):
 * 1. with a charge, `UPDATE accounts … RETURNING` the new balance (the update is the lock); without
 *    one, read the balance with `SELECT … FOR UPDATE`;
 * 2. delete the hold, if any;
 * 3. with a charge: insert ONE `charge` ledger entry (negative amount, the request id, the balance
 *    after) and add the amount to the key's spend;
 * 4. insert the request record.
 * The record's primary key and the ledger's one-charge-per-request unique index both refuse a
 * second settle of the same request, and any failure rolls back every step, so the hold is still
 * there for the caller to release and nothing was charged.
 */
export async function settleRequest(
  ctx: QueryContext,
  input: SettleInput,
): Promise<{ balanceMicros: Micros }> {
  const { record, charge, reservationId } = input;
  if (charge !== null) {
    assertInteger('charge.amountMicros', charge.amountMicros);
    if (charge.amountMicros <= 0) throw new RangeError('a charge must be a positive number of micros');
  }
  const recordRow = requestRecordRow(record, ctx.dialect);
  const accountId = record.accountId;

  return write(ctx, async (trx) => {
    let balanceMicros: Micros;
    if (charge !== null) {
      // Moving the balance takes the account's row lock, before anything else is written.
      const updated = await moveBalance.first(ctx, { accountId, amount: -charge.amountMicros }, trx);
      if (!updated) throw new Error(`account ${accountId} does not exist`);
      balanceMicros = toInteger(updated.balance_micros);
    } else {
      const account = await lockedBalance.first(ctx, { accountId }, trx);
      if (!account) throw new Error(`account ${accountId} does not exist`);
      balanceMicros = toInteger(account.balance_micros);
    }

    if (reservationId !== null) await deleteHold.run(ctx, { reservationId, accountId }, trx);

    if (charge !== null) {
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
          created_at: ctx.now(),
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
      }
    }

    await insertRecord.run(ctx, recordRow, trx);
    return { balanceMicros };
  });
}

/** The account's balance, read under its row lock (Postgres) for a settle that charges nothing. */
const lockedBalance = prepareQuery((db, p: { accountId: string }, dialect) =>
  db
    .selectFrom('accounts')
    .select('balance_micros')
    .where('id', '=', p.accountId)
    .$if(dialect.selectForUpdate, (qb) => qb.forUpdate()),
);

const deleteHold = prepareQuery((db, p: { reservationId: string; accountId: string }) =>
  db
    .deleteFrom('credit_reservations')
    .where('id', '=', p.reservationId)
    .where('account_id', '=', p.accountId),
);

const addKeySpend = prepareQuery((db, p: { keyId: string; accountId: string; amount: Micros }) =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ spent_micros: eb('spent_micros', '+', p.amount).$castTo<number>() }))
    .where('id', '=', p.keyId)
    .where('account_id', '=', p.accountId)
    .returning('spent_micros'),
);
