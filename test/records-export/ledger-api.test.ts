import type { NewLedgerEntry } from '@tollgate/core';
import { expect, it } from 'vitest';
import { describeAccountApi } from '../helpers/account-api-gateway.js';
import { expectError } from '../helpers/http.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describeAccountApi('GET /v1/ledger', (api) => {
  it('lists the ledger newest first with every field, the kinds of the API and the exact balance after each', async () => {
    const tenant = await api().newTenant({ creditMicros: 10_000_000 });
    const entries: NewLedgerEntry[] = [
      { amountMicros: -500_000, kind: 'fee', description: 'Top-up fee' },
      { amountMicros: -1_234, kind: 'charge', description: 'acme/fast: 1 in, 2 out', requestId: 'req_x' },
      { amountMicros: 1_234, kind: 'adjustment', description: 'refund of req_x', requestId: 'req_x' },
    ];
    await api().storage.appendLedgerEntries(tenant.account.id, entries);

    const res = await api().call('/v1/ledger', { key: tenant.inferenceKey });
    expect(res.status).toBe(200);
    expect(res.body.has_more).toBe(false);
    const data = res.body.data as Record<string, unknown>[];
    expect(data.map((e) => e.kind)).toEqual(['correction', 'charge', 'fee', 'credit']);
    expect(data.map((e) => e.balance_after_micros)).toEqual([9_500_000, 9_498_766, 9_500_000, 10_000_000]);
    expect(data[1]).toEqual({
      id: expect.stringMatching(/^led_/),
      created_at: expect.stringMatching(ISO),
      amount_micros: -1_234,
      amount_usd: -0.001234,
      balance_after_micros: 9_498_766,
      kind: 'charge',
      request_id: 'req_x',
      description: 'acme/fast: 1 in, 2 out',
    });
    expect(data[3]).toMatchObject({ amount_micros: 10_000_000, amount_usd: 10, request_id: null });
    const account = await api().storage.getAccount(tenant.account.id);
    expect(data[0]!.balance_after_micros).toBe(account!.balanceMicros);

    // Any scope.
    const viaProvisioning = await api().call('/v1/ledger', { key: tenant.provisioningKey });
    expect(viaProvisioning.body).toEqual(res.body);
  });

  it('pages with limit and after, without loss or repeat, has_more on every page but the last', async () => {
    const tenant = await api().newTenant({ creditMicros: 1_000_000 });
    const charges: NewLedgerEntry[] = Array.from({ length: 54 }, (_, i) => ({
      amountMicros: -(i + 1),
      kind: 'charge',
      description: `charge ${i + 1}`,
    }));
    await api().storage.appendLedgerEntries(tenant.account.id, charges);

    const first = await api().call('/v1/ledger', { key: tenant.inferenceKey });
    expect(first.body.data).toHaveLength(50);
    expect(first.body.has_more).toBe(true);

    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; ; page++) {
      const res = await api().call(`/v1/ledger?limit=7${after ? `&after=${after}` : ''}`, {
        key: tenant.inferenceKey,
      });
      expect(res.status).toBe(200);
      const ids = (res.body.data as { id: string }[]).map((e) => e.id);
      seen.push(...ids);
      if (!res.body.has_more) {
        expect(page).toBe(7);
        expect(ids).toHaveLength(55 - 7 * 7);
        break;
      }
      expect(ids).toHaveLength(7);
      after = ids[ids.length - 1];
    }
    expect(new Set(seen).size).toBe(55);
    const all = await api().call('/v1/ledger?limit=200', { key: tenant.inferenceKey });
    expect(all.body.has_more).toBe(false);
    expect((all.body.data as { id: string }[]).map((e) => e.id)).toEqual(seen);
    expect(all.body.data[0].description).toBe('charge 54');
    expect(all.body.data[54].kind).toBe('credit');
  });

  it('refuses a limit outside 1–200 and a cursor that is not an entry of the account', async () => {
    const tenant = await api().newTenant();
    const other = await api().newTenant();
    const theirs = await api().call('/v1/ledger', { key: other.inferenceKey });
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=abc',
      'limit=2.5',
      'after=led_nope',
      `after=${theirs.body.data[0].id}`,
    ]) {
      const res = await api().call(`/v1/ledger?${query}`, { key: tenant.inferenceKey });
      expectError(res, 400, 'invalid_request');
    }
    expect((await api().call('/v1/ledger?limit=200', { key: tenant.inferenceKey })).status).toBe(200);
    expectError(await api().call('/v1/ledger'), 401, 'unauthenticated');
  });

  it('shows only the caller’s account', async () => {
    const tenant = await api().newTenant({ creditMicros: 1_000_000 });
    const other = await api().newTenant({ creditMicros: 2_000_000 });
    const mine = await api().call('/v1/ledger', { key: tenant.inferenceKey });
    const theirs = await api().call('/v1/ledger', { key: other.inferenceKey });
    expect(mine.body.data.map((e: { amount_micros: number }) => e.amount_micros)).toEqual([1_000_000]);
    expect(theirs.body.data.map((e: { amount_micros: number }) => e.amount_micros)).toEqual([2_000_000]);
  });
});
