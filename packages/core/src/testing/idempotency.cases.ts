import { describe, expect, it } from 'vitest';
import type { IdempotencyClaimInput, IdempotencyCompletion } from '../storage/metering-types.js';
import { concurrently } from './metering-fixtures.js';
import { rawCount, rawOne, sqlText, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const T0 = 1_700_000_000_000;
const IN_FLIGHT_TTL = 300_000;
const REPLAY_TTL = 86_400_000;

export function idempotencyCases(ctx: ConformanceContext): void {
  const claim = (accountId: string, requestId: string, now = T0, key = 'idem-1'): IdempotencyClaimInput => ({
    accountId,
    key,
    requestId,
    now,
    inFlightTtlMs: IN_FLIGHT_TTL,
  });
  const completion = (accountId: string, requestId: string, now = T0 + 1_000): IdempotencyCompletion => ({
    accountId,
    key: 'idem-1',
    requestId,
    responseStatus: 200,
    responseBody: '{"id":"chatcmpl-1","sealed":"…"}',
    now,
    ttlMs: REPLAY_TTL,
  });
  const rawClaim = (accountId: string, key = 'idem-1') =>
    rawOne(
      ctx,
      `SELECT * FROM idempotency_claims WHERE account_id = ${sqlText(accountId)} AND idem_key = ${sqlText(key)}`,
    );
  const newAccount = () => ctx.storage.createAccount({ name: 'idem' });

  describe('idempotency claims', () => {
    it('claimIdempotencyKey - a new key is claimed in_flight until now + inFlightTtlMs (raw)', async () => {
      const account = await newAccount();

      expect(await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_a'))).toEqual({ state: 'claimed' });

      const row = await rawClaim(account.id);
      expect([row.state, row.request_id, row.response_body]).toEqual(['in_flight', 'req_a', null]);
      expect([toNumber(row.created_at), toNumber(row.expires_at)]).toEqual([T0, T0 + IN_FLIGHT_TTL]);
    });

    it('claimIdempotencyKey - a live in_flight claim answers in_flight with the holder’s request id', async () => {
      const account = await newAccount();
      await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_a'));

      expect(
        await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_b', T0 + IN_FLIGHT_TTL - 1)),
      ).toEqual({
        state: 'in_flight',
        requestId: 'req_a',
      });
      expect((await rawClaim(account.id)).request_id).toBe('req_a');
    });

    it('completeIdempotencyKey - stores the response; later claims replay it until now + ttlMs', async () => {
      const account = await newAccount();
      await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_a'));

      await ctx.storage.completeIdempotencyKey(completion(account.id, 'req_a'));

      const replay = {
        state: 'completed',
        requestId: 'req_a',
        responseStatus: 200,
        responseBody: '{"id":"chatcmpl-1","sealed":"…"}',
      };
      expect(await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_b', T0 + 2_000))).toEqual(replay);
      const row = await rawClaim(account.id);
      expect([row.state, toNumber(row.response_status), toNumber(row.expires_at)]).toEqual([
        'completed',
        200,
        T0 + 1_000 + REPLAY_TTL,
      ]);
      // The replay window outlives the in-flight one.
      expect(
        await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_c', T0 + 1_000 + REPLAY_TTL - 1)),
      ).toEqual(replay);
    });

    it('claimIdempotencyKey - an expired claim (in_flight or completed) is claimed afresh', async () => {
      const account = await newAccount();
      await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_dead'));

      // A dead process's claim is released after inFlightTtlMs: expires_at <= now is expired.
      expect(await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_a', T0 + IN_FLIGHT_TTL))).toEqual({
        state: 'claimed',
      });
      expect((await rawClaim(account.id)).request_id).toBe('req_a');

      await ctx.storage.completeIdempotencyKey(completion(account.id, 'req_a', T0 + IN_FLIGHT_TTL));
      const afterReplay = T0 + IN_FLIGHT_TTL + REPLAY_TTL;
      expect(await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_b', afterReplay))).toEqual({
        state: 'claimed',
      });
      const row = await rawClaim(account.id);
      expect([row.state, row.request_id, row.response_status, row.response_body]).toEqual([
        'in_flight',
        'req_b',
        null,
        null,
      ]);
    });

    it('completeIdempotencyKey - only completes the in_flight claim of the same request', async () => {
      const account = await newAccount();
      await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_dead'));
      await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_a', T0 + IN_FLIGHT_TTL));

      // The dead process comes back late: its claim was taken over, its completion is ignored.
      await ctx.storage.completeIdempotencyKey(completion(account.id, 'req_dead', T0 + IN_FLIGHT_TTL + 1));
      expect(await rawClaim(account.id)).toMatchObject({ state: 'in_flight', request_id: 'req_a' });

      await ctx.storage.completeIdempotencyKey(completion(account.id, 'req_a', T0 + IN_FLIGHT_TTL + 1));
      await ctx.storage.completeIdempotencyKey({
        ...completion(account.id, 'req_a', T0 + IN_FLIGHT_TTL + 2),
        responseBody: 'overwritten',
      });
      expect((await rawClaim(account.id)).response_body).toBe('{"id":"chatcmpl-1","sealed":"…"}');
    });

    it('releaseIdempotencyKey - deletes only this request’s in_flight claim, so the key can be claimed again', async () => {
      const account = await newAccount();
      await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_a'));

      await ctx.storage.releaseIdempotencyKey(account.id, 'idem-1', 'req_other');
      expect(await rawCount(ctx, 'idempotency_claims')).toBe(1);
      await ctx.storage.releaseIdempotencyKey(account.id, 'idem-1', 'req_a');
      expect(await rawCount(ctx, 'idempotency_claims')).toBe(0);

      expect(await ctx.storage.claimIdempotencyKey(claim(account.id, 'req_b', T0 + 1))).toEqual({
        state: 'claimed',
      });
      await ctx.storage.completeIdempotencyKey(completion(account.id, 'req_b'));
      await ctx.storage.releaseIdempotencyKey(account.id, 'idem-1', 'req_b');
      expect((await rawClaim(account.id)).state).toBe('completed');
    });

    it('claimIdempotencyKey - keys are per account: the same string in two accounts is two claims', async () => {
      const first = await newAccount();
      const second = await newAccount();

      expect(await ctx.storage.claimIdempotencyKey(claim(first.id, 'req_a'))).toEqual({ state: 'claimed' });
      expect(await ctx.storage.claimIdempotencyKey(claim(second.id, 'req_b'))).toEqual({ state: 'claimed' });
      expect(await ctx.storage.claimIdempotencyKey(claim(first.id, 'req_c', T0, 'idem-2'))).toEqual({
        state: 'claimed',
      });
    });

    it('claimIdempotencyKey - 100 concurrent claims of one key: exactly one is claimed, the rest see it in flight (half through a second storage when there is one)', async () => {
      const account = await newAccount();

      const results = await concurrently(ctx, 100, (storage, i) =>
        storage.claimIdempotencyKey(claim(account.id, `req_${i}`, T0 + i)),
      );

      const winners = results.flatMap((result, i) => (result.state === 'claimed' ? [`req_${i}`] : []));
      expect(winners).toHaveLength(1);
      const others = results.filter((result) => result.state !== 'claimed');
      expect(others).toEqual(
        Array.from({ length: 99 }, () => ({ state: 'in_flight', requestId: winners[0] })),
      );
      expect((await rawClaim(account.id)).request_id).toBe(winners[0]);
    });
  });
}
