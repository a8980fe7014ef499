import { formatMicrosAsUsd, type RequestRecord, topUpAccount } from '@tollgate/core';
import { requestRecord } from '@tollgate/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newKey } from './helpers/gateways.js';
import {
  acknowledgedChargesKept,
  balanceMatchesLedger,
  canariesAbsent,
  chargesMatchRecords,
  claimsExpiredBy,
  errorEnvelopeOr2xx,
  exactly,
  holdsExpiredBy,
  idempotentGroupsConsistent,
  ledgerEntriesKept,
  noClaimLeftInFlight,
  noErrorLogLines,
  noInternalErrors,
  noReservationLeft,
  nothingChargedForFailures,
  oneRecordPerRequest,
  oneRecordPerSeenRequestId,
  readLedger,
  type Shown,
  shownCostsMatchRecords,
  withinLimit,
} from './helpers/invariants.js';
import { dbKinds, lit, openDb, type ReliabilityDb } from './helpers/reliability-db.js';

/**
 * Check the checkers: every invariant function is run on a scratch database in a healthy state
 * (it must report nothing), then on the same state broken on purpose in the way the invariant
 * forbids (it must report exactly that). A checker that cannot fail would prove nothing.
 */

const CREDIT = 10_000_000;
const TTL = 15 * 60_000;
const CLAIM_TTL = 5 * 60_000;

/** A plausible record of a served request (the shared fixture), with the ids this test needs. */
function record(
  id: string,
  accountId: string,
  keyId: string,
  fields: Partial<RequestRecord> = {},
): RequestRecord {
  return requestRecord(accountId, {
    id,
    keyId,
    model: 'chaos/solo',
    provider: 'c3',
    durationMs: 5,
    ...fields,
  });
}

for (const variant of dbKinds) {
  if (variant.skip) console.info(`[reliability] checkers on ${variant.kind} are skipped: ${variant.skip}`);
  describe.skipIf(Boolean(variant.skip))(
    `check the checkers: each invariant reports a state broken on purpose [${variant.kind}]${variant.skip ? ` (skipped: ${variant.skip})` : ''}`,
    () => {
      let db: ReliabilityDb;
      let accountId = '';
      let keyId = '';
      let now = 0;
      /** r1 charged 500 µ$, r2 refused, r3 waived (cost 0). */
      const ids = { charged: 'req_checkcharged', refused: 'req_checkrefused', waived: 'req_checkwaived' };
      let snapshot: string[] = [];

      beforeEach(async () => {
        db = await openDb(variant.kind);
        now = Date.now();
        const account = await db.storage.createAccount({ name: 'checkers' });
        accountId = account.id;
        keyId = (await newKey(db.storage, accountId)).id;
        await topUpAccount(db.storage, accountId, CREDIT, 0);
        const hold = await db.storage.reserveCredit({
          accountId,
          keyId,
          requestId: ids.charged,
          amountMicros: 1_000,
          now,
          ttlMs: TTL,
        });
        if (!hold.ok) throw new Error('the scratch hold was refused');
        await db.storage.settleRequest({
          reservationId: hold.reservation.id,
          record: record(ids.charged, accountId, keyId, { costMicros: 500 }),
          charge: { amountMicros: 500, description: 'chaos/solo via c3', keyId },
        });
        await db.storage.insertRequestRecord(
          record(ids.refused, accountId, keyId, {
            status: 'refused',
            httpStatus: 402,
            errorCode: 'insufficient_credit',
            provider: null,
          }),
        );
        await db.storage.settleRequest({
          reservationId: null,
          record: record(ids.waived, accountId, keyId, { waived: 'zero_completion', savedMicros: 40 }),
          charge: null,
        });
        await db.storage.claimIdempotencyKey({
          accountId,
          key: 'done',
          requestId: ids.charged,
          now,
          inFlightTtlMs: CLAIM_TTL,
        });
        await db.storage.completeIdempotencyKey({
          accountId,
          key: 'done',
          requestId: ids.charged,
          responseStatus: 200,
          responseBody: 'sealed',
          now,
          ttlMs: 24 * 3600_000,
        });
        snapshot = (await readLedger(db, accountId)).map((e) => e.id);
      });

      afterEach(async () => {
        await db?.close();
      });

      const seen = () => Object.values(ids);
      const strayCharge = (requestId: string, amount: number) =>
        db.query(
          `INSERT INTO ledger_entries (id, account_id, amount_micros, balance_after_micros, kind, description, request_id, key_id, created_at)
           VALUES (${lit(`led_stray${Math.random().toString(36).slice(2, 8)}`)}, ${lit(accountId)}, ${-amount}, 0, 'charge', 'stray', ${lit(requestId)}, ${lit(keyId)}, ${now})`,
        );

      it('the healthy scratch state passes every invariant', async () => {
        expect([
          ...(await oneRecordPerSeenRequestId(db, accountId, seen())),
          ...(await oneRecordPerRequest(db, accountId, 3)),
          ...(await chargesMatchRecords(db, accountId)),
          ...(await balanceMatchesLedger(db, accountId, CREDIT)),
          ...(await nothingChargedForFailures(db, accountId, [ids.refused])),
          ...(await noReservationLeft(db, accountId, now)),
          ...(await noClaimLeftInFlight(db, accountId)),
          ...(await ledgerEntriesKept(db, accountId, snapshot)),
          ...(await acknowledgedChargesKept(db, accountId, new Map([[ids.charged, 500]]))),
          ...(await holdsExpiredBy(db, accountId, now + TTL + 1)),
          ...(await claimsExpiredBy(db, accountId, now + CLAIM_TTL + 1)),
        ]).toEqual([]);
      });

      it('a stray charge INSERTed through raw SQL breaks "one ledger entry per charged request" and "balance == Σ ledger"', async () => {
        await strayCharge('req_nobody', 123);
        expect(await chargesMatchRecords(db, accountId)).toEqual([
          expect.stringContaining('has no request record'),
        ]);
        expect(await balanceMatchesLedger(db, accountId, CREDIT)).toContainEqual(
          expect.stringMatching(/^balance \d+ µ\$ != Σ ledger/),
        );
      });

      it('a second charge for one request (its unique index dropped first) is reported', async () => {
        await expect(strayCharge(ids.charged, 500)).rejects.toThrow(); // the database itself refuses it
        await db.query('DROP INDEX ledger_entries_one_charge_per_request');
        await strayCharge(ids.charged, 500);
        expect(await chargesMatchRecords(db, accountId)).toContainEqual(
          `request ${ids.charged} has 2 charge entries`,
        );
      });

      it('a deleted record breaks "exactly one record per request" and "every charge has its record"', async () => {
        await db.query(`DELETE FROM request_records WHERE id = ${lit(ids.charged)}`);
        expect(await oneRecordPerSeenRequestId(db, accountId, seen())).toEqual([
          `request ${ids.charged} (seen by a client) has 0 records, expected exactly 1`,
        ]);
        expect(await oneRecordPerRequest(db, accountId, 3)).toEqual([
          expect.stringContaining('2 request records for 3'),
        ]);
        expect(await chargesMatchRecords(db, accountId)).toEqual([
          expect.stringContaining('has no request record'),
        ]);
      });

      it('a record whose cost differs from its charge is reported', async () => {
        await db.query(`UPDATE request_records SET cost_micros = 501 WHERE id = ${lit(ids.charged)}`);
        expect(await chargesMatchRecords(db, accountId)).toEqual([
          `request ${ids.charged}: record cost 501 µ$, ledger charged 500 µ$`,
        ]);
        expect(await balanceMatchesLedger(db, accountId, CREDIT)).toEqual([
          'Σ charges 500 µ$ != Σ record costs 501 µ$',
        ]);
      });

      it('a charged record with no charge entry is reported', async () => {
        await db.query(`UPDATE request_records SET cost_micros = 77 WHERE id = ${lit(ids.waived)}`);
        expect(await chargesMatchRecords(db, accountId)).toContainEqual(
          expect.stringContaining('but has no charge entry'),
        );
      });

      it('a charged refusal breaks "nothing charged for refused or failed requests"', async () => {
        await db.query(
          `UPDATE request_records SET status = 'refused', http_status = 402 WHERE id = ${lit(ids.charged)}`,
        );
        expect(await nothingChargedForFailures(db, accountId)).toEqual([
          `refused request ${ids.charged} (null) has cost 500 µ$`,
          `refused request ${ids.charged} (null) has a ledger entry`,
        ]);
        expect(await nothingChargedForFailures(db, accountId, [ids.waived])).toHaveLength(2);
        await strayCharge(ids.refused, 10);
        expect(await nothingChargedForFailures(db, accountId, [ids.refused])).toContainEqual(
          `request ${ids.refused} failed for its client but has a ledger entry`,
        );
      });

      it('a tampered cached balance breaks "balance == Σ ledger == credits − Σ charges"', async () => {
        await db.query(
          `UPDATE accounts SET balance_micros = balance_micros + 1 WHERE id = ${lit(accountId)}`,
        );
        expect(await balanceMatchesLedger(db, accountId, CREDIT)).toEqual([
          `balance ${CREDIT - 499} µ$ != Σ ledger ${CREDIT - 500} µ$`,
          `balance ${CREDIT - 499} µ$ != credits ${CREDIT} − Σ charges 500 = ${CREDIT - 500}`,
        ]);
        expect(await balanceMatchesLedger(db, accountId, CREDIT + 1)).toContainEqual(
          `Σ credit/fee entries ${CREDIT} µ$ != credits topped up ${CREDIT + 1} µ$`,
        );
      });

      it('a hold left behind breaks "no reservation left"; it still expires, unless its expiry is far away', async () => {
        const hold = await db.storage.reserveCredit({
          accountId,
          keyId,
          requestId: 'req_left',
          amountMicros: 9,
          now,
          ttlMs: TTL,
        });
        expect(hold.ok).toBe(true);
        expect(await noReservationLeft(db, accountId, now)).toEqual([expect.stringContaining('live hold')]);
        expect(await holdsExpiredBy(db, accountId, now + TTL + 1)).toEqual([]);
        await db.query(
          `INSERT INTO credit_reservations (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
           VALUES ('res_forever', ${lit(accountId)}, ${lit(keyId)}, 'req_forever', 5, ${now}, ${now + 10 * TTL})`,
        );
        expect(await holdsExpiredBy(db, accountId, now + TTL + 1)).toEqual([
          expect.stringContaining('res_forever'),
        ]);
        await db.storage.sweepExpired(now + TTL + 1);
        expect(await noReservationLeft(db, accountId, now + TTL + 1)).toEqual([
          expect.stringContaining('res_forever'),
        ]);
      });

      it('an expired hold row that nobody swept is still reported as left behind', async () => {
        await db.query(
          `INSERT INTO credit_reservations (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
           VALUES ('res_dead', ${lit(accountId)}, ${lit(keyId)}, 'req_dead', 5, ${now - 2 * TTL}, ${now - TTL})`,
        );
        expect(await noReservationLeft(db, accountId, now)).toEqual([
          '1 credit_reservations rows remain (0 of them live)',
        ]);
      });

      it('a claim left in flight breaks "no claim left in flight"; it expires, unless its expiry is far away', async () => {
        await db.storage.claimIdempotencyKey({
          accountId,
          key: 'stuck',
          requestId: 'req_stuck',
          now,
          inFlightTtlMs: CLAIM_TTL,
        });
        expect(await noClaimLeftInFlight(db, accountId)).toEqual([
          expect.stringContaining('req_stuck is still in_flight'),
        ]);
        expect(await claimsExpiredBy(db, accountId, now + CLAIM_TTL + 1)).toEqual([]);
        await db.query(
          `UPDATE idempotency_claims SET expires_at = ${now + 100 * CLAIM_TTL} WHERE request_id = 'req_stuck'`,
        );
        expect(await claimsExpiredBy(db, accountId, now + CLAIM_TTL + 1)).toEqual([
          expect.stringContaining('req_stuck'),
        ]);
      });

      it('the ledger refuses deletes (append-only); a lost entry would be reported', async () => {
        await expect(
          db.query(`DELETE FROM ledger_entries WHERE account_id = ${lit(accountId)}`),
        ).rejects.toThrow();
        expect(await ledgerEntriesKept(db, accountId, [...snapshot, 'led_missing'])).toEqual([
          'ledger entry led_missing was lost',
        ]);
      });

      it('an acknowledged charge missing or different in the ledger is reported', async () => {
        expect(
          await acknowledgedChargesKept(
            db,
            accountId,
            new Map([
              [ids.charged, 499],
              ['req_ghost', 10],
            ]),
          ),
        ).toEqual([
          `request ${ids.charged} was answered with cost 499 µ$ but charged 500 µ$`,
          'request req_ghost was answered with cost 10 µ$ but has no charge entry',
        ]);
      });

      it('a replay without its own record breaks the record count', async () => {
        expect(await oneRecordPerRequest(db, accountId, 4)).toEqual([
          expect.stringContaining('3 request records for 4'),
        ]);
      });

      it('a shown cost that differs from the record, or a wrong cost header, is reported', async () => {
        const shown: Shown = {
          label: 'x',
          status: 200,
          requestId: ids.charged,
          kind: 'json',
          errorCode: null,
          shownCostMicros: 500,
          costHeaderUsd: formatMicrosAsUsd(500),
        };
        expect(await shownCostsMatchRecords(db, accountId, [shown], formatMicrosAsUsd)).toEqual([]);
        expect(
          await shownCostsMatchRecords(
            db,
            accountId,
            [{ ...shown, shownCostMicros: 400, costHeaderUsd: formatMicrosAsUsd(400) }],
            formatMicrosAsUsd,
          ),
        ).toEqual([`x ${ids.charged}: shown 400 µ$, recorded 500 µ$`]);
        expect(
          await shownCostsMatchRecords(
            db,
            accountId,
            [{ ...shown, costHeaderUsd: '0.000400' }],
            formatMicrosAsUsd,
          ),
        ).toEqual([expect.stringContaining('X-Gateway-Cost-Usd 0.000400')]);
      });

      it('two answers or two charges for one Idempotency-Key are reported', async () => {
        const a: Shown = {
          label: 'k',
          status: 200,
          requestId: ids.charged,
          kind: 'json',
          errorCode: null,
          shownCostMicros: 500,
          costHeaderUsd: null,
        };
        expect(await idempotentGroupsConsistent(db, accountId, new Map([['k', [a, a]]]))).toEqual([]);
        await db.query(`UPDATE request_records SET cost_micros = 5 WHERE id = ${lit(ids.waived)}`);
        expect(
          await idempotentGroupsConsistent(
            db,
            accountId,
            new Map([['k', [a, { ...a, requestId: ids.waived }]]]),
          ),
        ).toEqual(['k: 2 different answers (req_checkcharged, req_checkwaived)', 'k: 2 charged requests']);
      });
    },
  );
}

describe('check the checkers: pure checks', () => {
  const headers = (requestId: string | null, type = 'application/json') => {
    const h = new Headers({ 'content-type': type });
    if (requestId) h.set('x-gateway-request-id', requestId);
    return h;
  };
  const envelope = (code: string, type: string, requestId = 'req_abc') =>
    JSON.stringify({ error: { message: 'm', type, code, request_id: requestId } });

  it('the envelope check accepts a proper 4xx and a JSON 2xx, and reports every way of breaking it', () => {
    expect(
      errorEnvelopeOr2xx('ok', {
        status: 400,
        headers: headers('req_abc'),
        text: envelope('invalid_request', 'invalid_request_error'),
      }),
    ).toEqual([]);
    expect(errorEnvelopeOr2xx('ok', { status: 200, headers: headers('req_abc'), text: '{"a":1}' })).toEqual(
      [],
    );
    const broken: [string, Parameters<typeof errorEnvelopeOr2xx>[1], RegExp][] = [
      [
        '5xx',
        { status: 500, headers: headers('req_abc'), text: envelope('internal_error', 'api_error') },
        /^5xx/,
      ],
      ['not JSON', { status: 400, headers: headers('req_abc'), text: 'Bad Request' }, /not JSON/],
      [
        'not the envelope',
        { status: 400, headers: headers('req_abc'), text: '{"message":"x"}' },
        /not the error envelope/,
      ],
      [
        'wrong status for the code',
        { status: 400, headers: headers('req_abc'), text: envelope('not_found', 'not_found_error') },
        /is 404, sent 400/,
      ],
      [
        'wrong type',
        { status: 404, headers: headers('req_abc'), text: envelope('not_found', 'api_error') },
        /has type not_found_error/,
      ],
      [
        'unknown code',
        { status: 400, headers: headers('req_abc'), text: envelope('oops', 'invalid_request_error') },
        /unknown error code/,
      ],
      [
        'no request id header',
        { status: 400, headers: headers(null), text: envelope('invalid_request', 'invalid_request_error') },
        /no X-Gateway-Request-Id/,
      ],
      [
        'request id mismatch',
        {
          status: 400,
          headers: headers('req_other'),
          text: envelope('invalid_request', 'invalid_request_error'),
        },
        /!= header/,
      ],
      ['2xx not JSON', { status: 200, headers: headers('req_abc'), text: '<html>' }, /2xx body is not JSON/],
      ['a redirect', { status: 302, headers: headers('req_abc'), text: '' }, /unexpected status/],
    ];
    for (const [name, response, pattern] of broken) {
      expect(errorEnvelopeOr2xx(name, response), name).toContainEqual(expect.stringMatching(pattern));
    }
  });

  it('the canary check finds a canary in bytes and in text, and only then', () => {
    const canary = 'CANARYPROMPTdeadbeef';
    expect(canariesAbsent('db', Buffer.from(`xx\u0000${canary}\u0000yy`), [canary])).toEqual([
      expect.stringContaining(`db contains canary ${canary} at byte 3`),
    ]);
    expect(canariesAbsent('log', `{"msg":"${canary}"}`, ['CANARYOTHER', canary])).toHaveLength(1);
    expect(canariesAbsent('log', '{"msg":"clean"}', [canary])).toEqual([]);
  });

  it('an error-level log line (pino level 50 or 60, or a bare stack trace) is reported, and only that', () => {
    const info = JSON.stringify({ level: 30, msg: 'Tollgate listening on http://127.0.0.1:1' });
    const warn = JSON.stringify({ level: 40, msg: 'upstream 503' });
    expect(noErrorLogLines('log', `${info}\n${warn}\n\n`)).toEqual([]);
    const error = JSON.stringify({ level: 50, msg: 'unexpected failure' });
    const fatal = JSON.stringify({ level: 60, msg: 'crashed' });
    expect(noErrorLogLines('log', `${info}\n${error}\n${fatal}`)).toEqual([
      `log: logged at error level: ${error}`,
      `log: logged at error level: ${fatal}`,
    ]);
    expect(noErrorLogLines('log', `${info}\nTypeError: x is not a function\n    at f (a.js:1:1)`)).toEqual([
      'log: logged at error level: TypeError: x is not a function',
    ]);
  });

  it('a limit exceeded by a single micro, and an inexact count, are reported', () => {
    expect(withinLimit('balance', 1000, 1000)).toEqual([]);
    expect(withinLimit('balance', 1001, 1000)).toEqual([
      'balance: 1001 µ$ used of a 1000 µ$ limit (over by 1 µ$)',
    ]);
    expect(exactly('admitted', 10, 10)).toEqual([]);
    expect(exactly('admitted', 11, 10)).toEqual(['admitted: 11, expected exactly 10']);
  });

  it('an internal error, a dropped connection or a stream without [DONE] under chaos is reported', () => {
    const base: Shown = {
      label: 'm1',
      status: 200,
      requestId: 'req_1',
      kind: 'json',
      errorCode: null,
      shownCostMicros: 1,
      costHeaderUsd: null,
    };
    expect(noInternalErrors([base, { ...base, kind: 'aborted', status: null }], [200])).toEqual([]);
    expect(
      noInternalErrors(
        [
          { ...base, status: 500, errorCode: 'internal_error' },
          { ...base, kind: 'transport', status: null, transportError: 'socket hang up' },
          { ...base, kind: 'sse', done: false },
        ],
        [200],
      ),
    ).toEqual([
      'm1: 500 internal_error (req_1)',
      'm1: no response (socket hang up)',
      'm1: stream ended without [DONE]',
    ]);
  });
});

describe('check the checkers: the database dump sees what was written', () => {
  it('a canary written into a record is found in the SQLite file and WAL bytes', async () => {
    const db = await openDb('sqlite');
    try {
      const account = await db.storage.createAccount({ name: 'dump' });
      const canary = `CANARYDUMP${Date.now()}`;
      await db.storage.insertRequestRecord(
        record('req_dump', account.id, 'key_x', { metadata: { note: canary } }),
      );
      expect(canariesAbsent('SQLite file + WAL', await db.dump(), [canary])).toEqual([
        expect.stringContaining(`contains canary ${canary}`),
      ]);
    } finally {
      await db.close();
    }
  });
});
