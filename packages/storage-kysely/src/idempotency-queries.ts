import type { IdempotencyClaimInput, IdempotencyClaimResult, IdempotencyCompletion } from '@tollgate/core';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { toInteger } from './row-mappers.js';

/**
 * `Storage.claimIdempotencyKey`, in one write transaction and one statement that decides:
 * `INSERT … ON CONFLICT (account_id, idem_key) DO UPDATE … WHERE expires_at <= now RETURNING`.
 * A new key, or an expired row (a dead process's claim, or a replay window that ran out), is
 * (re)claimed and the statement returns it; a live row is left alone and returns nothing, and is
 * then read for its state. On Postgres the conflicting row is locked by the upsert whether or not
 * it is updated (so it cannot vanish before the read), and a concurrent claimer waits for the
 * first one's commit and then sees its row as live; on SQLite the write transaction serialises
 * everything. Either way exactly one of any number of concurrent claims is `claimed`.
 */
export async function claimIdempotencyKey(
  ctx: QueryContext,
  input: IdempotencyClaimInput,
): Promise<IdempotencyClaimResult> {
  assertInteger('now', input.now);
  assertInteger('inFlightTtlMs', input.inFlightTtlMs);
  if (input.inFlightTtlMs <= 0) throw new RangeError('inFlightTtlMs must be positive');
  const { accountId, key, requestId, now } = input;
  const claim = {
    state: 'in_flight' as const,
    request_id: requestId,
    response_status: null,
    response_body: null,
    created_at: now,
    expires_at: now + input.inFlightTtlMs,
  };

  return write(ctx, async (trx) => {
    const taken = await trx
      .insertInto('idempotency_claims')
      .values({ account_id: accountId, idem_key: key, ...claim })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'idem_key'])
          .doUpdateSet(claim)
          .where('idempotency_claims.expires_at', '<=', now),
      )
      .returning('request_id')
      .executeTakeFirst();
    if (taken) return { state: 'claimed' };

    const row = await trx
      .selectFrom('idempotency_claims')
      .select(['state', 'request_id', 'response_status', 'response_body'])
      .where('account_id', '=', accountId)
      .where('idem_key', '=', key)
      .executeTakeFirstOrThrow();
    if (row.state === 'in_flight') return { state: 'in_flight', requestId: row.request_id };
    return {
      state: 'completed',
      requestId: row.request_id,
      responseStatus: toInteger(row.response_status),
      responseBody: row.response_body ?? '',
    };
  });
}

/**
 * `Storage.completeIdempotencyKey`: only this request's `in_flight` claim becomes `completed`, kept
 * until `now + ttlMs`. A claim that expired and was taken by another request has another request
 * id, so a late completion cannot overwrite it.
 */
export async function completeIdempotencyKey(ctx: QueryContext, input: IdempotencyCompletion): Promise<void> {
  assertInteger('responseStatus', input.responseStatus);
  assertInteger('now', input.now);
  assertInteger('ttlMs', input.ttlMs);
  await write(ctx, (trx) =>
    trx
      .updateTable('idempotency_claims')
      .set({
        state: 'completed',
        response_status: input.responseStatus,
        response_body: input.responseBody,
        expires_at: input.now + input.ttlMs,
      })
      .where('account_id', '=', input.accountId)
      .where('idem_key', '=', input.key)
      .where('request_id', '=', input.requestId)
      .where('state', '=', 'in_flight')
      .execute(),
  );
}

/** `Storage.releaseIdempotencyKey`: deletes this request's `in_flight` claim and nothing else. */
export async function releaseIdempotencyKey(
  ctx: QueryContext,
  accountId: string,
  key: string,
  requestId: string,
): Promise<void> {
  await write(ctx, (trx) =>
    trx
      .deleteFrom('idempotency_claims')
      .where('account_id', '=', accountId)
      .where('idem_key', '=', key)
      .where('request_id', '=', requestId)
      .where('state', '=', 'in_flight')
      .execute(),
  );
}
