import { type Micros, newId, type SettleInput } from '@tollgate/core';
import { assertInteger, type QueryContext, write } from './query-context.js';
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
      const updated = await trx
        .updateTable('accounts')
        .set((eb) => ({ balance_micros: eb('balance_micros', '-', charge.amountMicros).$castTo<number>() }))
        .where('id', '=', accountId)
        .returning('balance_micros')
        .executeTakeFirst();
      if (!updated) throw new Error(`account ${accountId} does not exist`);
      balanceMicros = toInteger(updated.balance_micros);
    } else {
      const account = await trx
        .selectFrom('accounts')
        .select('balance_micros')
        .where('id', '=', accountId)
        .$if(ctx.dialect.selectForUpdate, (qb) => qb.forUpdate())
        .executeTakeFirst();
      if (!account) throw new Error(`account ${accountId} does not exist`);
      balanceMicros = toInteger(account.balance_micros);
    }

    if (reservationId !== null) {
      await trx
        .deleteFrom('credit_reservations')
        .where('id', '=', reservationId)
        .where('account_id', '=', accountId)
        .execute();
    }

    if (charge !== null) {
      await trx
        .insertInto('ledger_entries')
        .values({
          id: newId('led'),
          account_id: accountId,
          amount_micros: -charge.amountMicros,
          balance_after_micros: balanceMicros,
          kind: 'charge',
          description: charge.description,
          request_id: record.id,
          key_id: charge.keyId,
          created_at: ctx.now(),
        })
        .execute();
      if (charge.keyId !== null) {
        const key = await trx
          .updateTable('api_keys')
          .set((eb) => ({ spent_micros: eb('spent_micros', '+', charge.amountMicros).$castTo<number>() }))
          .where('id', '=', charge.keyId)
          .where('account_id', '=', accountId)
          .returning('spent_micros')
          .executeTakeFirst();
        if (!key) throw new Error(`key ${charge.keyId} is not a key of account ${accountId}`);
        // Throws (and so rolls back) should the spend ever leave the safe-integer range.
        toInteger(key.spent_micros);
      }
    }

    await trx.insertInto('request_records').values(recordRow).execute();
    return { balanceMicros };
  });
}
