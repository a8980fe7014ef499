import type { RequestRecord } from '@tollgate/core';
import { requestRecord } from '@tollgate/core/testing';
import { expect, it } from 'vitest';
import { describeAccountApi } from '../helpers/account-api-gateway.js';
import { expectError } from '../helpers/http.js';
import type { Tenant } from '../helpers/tenant.js';

const T0 = Date.UTC(2025, 0, 15, 9);

type Item = Record<string, unknown> & { id: string };

describeAccountApi('GET /v1/generations', (api) => {
  /** Stores `records` (ids made unique per tenant) and answers them by their short names. */
  async function store(tenant: Tenant, records: Partial<RequestRecord>[]): Promise<RequestRecord[]> {
    const stored: RequestRecord[] = [];
    for (const overrides of records) {
      const record = requestRecord(tenant.account.id, overrides);
      await api().storage.insertRequestRecord(record);
      stored.push(record);
    }
    return stored;
  }

  async function list(tenant: Tenant, query = '', key = tenant.inferenceKey) {
    const res = await api().call(`/v1/generations${query ? `?${query}` : ''}`, { key });
    expect(res.status, res.text).toBe(200);
    return res.body as { data: Item[]; has_more: boolean };
  }

  const idsOf = (page: { data: Item[] }) => page.data.map((item) => item.id);

  it('lists newest first, each item exactly as GET /v1/generation shows it', async () => {
    const tenant = await api().newTenant();
    const [older, newer] = await store(tenant, [
      { createdAt: T0, metadata: { team: 'a' }, keyId: tenant.inferenceKeyId },
      { createdAt: T0 + 5, status: 'error', httpStatus: 502, errorCode: 'upstream_error', costMicros: 0 },
    ]);
    const page = await list(tenant);
    expect(page.has_more).toBe(false);
    expect(idsOf(page)).toEqual([newer!.id, older!.id]);
    for (const item of page.data) {
      const one = await api().call(`/v1/generation?id=${item.id}`, { key: tenant.inferenceKey });
      expect(item).toEqual(one.body.data);
    }
    expect(page.data[1]).toMatchObject({ metadata: { team: 'a' }, key_id: tenant.inferenceKeyId });
  });

  it('pages with limit and after through same-millisecond records, has_more on every page but the last', async () => {
    const tenant = await api().newTenant();
    const records = await store(
      tenant,
      Array.from({ length: 23 }, (_, i) => ({ createdAt: T0 + Math.floor(i / 3) })),
    );
    const expected = [...records]
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
      .map((r) => r.id);

    const first = await list(tenant);
    expect(idsOf(first)).toEqual(expected);
    expect(first.has_more).toBe(false);

    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; ; page++) {
      const res = await list(tenant, `limit=5${after ? `&after=${after}` : ''}`);
      seen.push(...idsOf(res));
      if (!res.has_more) {
        expect(page).toBe(4);
        expect(res.data).toHaveLength(3);
        break;
      }
      expect(res.data).toHaveLength(5);
      after = res.data[4]!.id;
    }
    expect(seen).toEqual(expected);
    const exact = await list(tenant, 'limit=23');
    expect(exact.has_more).toBe(false);
    expect((await list(tenant, 'limit=22')).has_more).toBe(true);
    expect(await list(tenant, `after=${expected[22]}`)).toEqual({ data: [], has_more: false });
  });

  it('filters by model (served or asked for), status, key_id and label, each and combined', async () => {
    const tenant = await api().newTenant();
    const [a, b, c, d, e] = await store(tenant, [
      { createdAt: T0 + 1, model: 'acme/fast', keyId: 'key_one', metadata: { team: 'red', env: 'prod' } },
      { createdAt: T0 + 2, model: 'acme/slow', requestedModel: 'acme/fast', keyId: 'key_two' },
      {
        createdAt: T0 + 3,
        model: null,
        status: 'refused',
        httpStatus: 402,
        keyId: 'key_one',
        metadata: { team: 'red' },
      },
      { createdAt: T0 + 4, model: 'acme/fast', status: 'error', keyId: 'key_one', metadata: { team: 'Red' } },
      { createdAt: T0 + 5, model: 'acme/fast', metadata: { team: 'red=blue', note: 'x "y"' } },
    ]);
    const ids = async (query: string) => idsOf(await list(tenant, query));
    expect(await ids('model=acme/fast')).toEqual([e!.id, d!.id, b!.id, a!.id]);
    expect(await ids('model=acme/slow')).toEqual([b!.id]);
    expect(await ids('model=ACME/FAST')).toEqual([]);
    expect(await ids('status=refused')).toEqual([c!.id]);
    expect(await ids('status=success')).toEqual([e!.id, b!.id, a!.id]);
    expect(await ids('status=in_progress')).toEqual([]);
    expect(await ids('key_id=key_one')).toEqual([d!.id, c!.id, a!.id]);
    expect(await ids('label=team=red')).toEqual([c!.id, a!.id]);
    expect(await ids('label=team%3Dred%3Dblue')).toEqual([e!.id]);
    expect(await ids(`label=note=${encodeURIComponent('x "y"')}`)).toEqual([e!.id]);
    expect(await ids('label=env=prod')).toEqual([a!.id]);
    expect(await ids('label=team=')).toEqual([]);
    expect(await ids('model=acme/fast&key_id=key_one')).toEqual([d!.id, a!.id]);
    expect(await ids('model=acme/fast&key_id=key_one&status=success&label=team=red')).toEqual([a!.id]);
    expect(await ids('label=team=red&status=error')).toEqual([]);

    // Paging keeps the filter: after the first record of a filtered page, the rest of that filter.
    const first = await list(tenant, 'model=acme/fast&limit=2');
    expect(first).toMatchObject({ has_more: true });
    expect(idsOf(first)).toEqual([e!.id, d!.id]);
    const second = await list(tenant, `model=acme/fast&limit=2&after=${d!.id}`);
    expect(second.has_more).toBe(false);
    expect(idsOf(second)).toEqual([b!.id, a!.id]);
    // The cursor need not match the filter itself.
    expect(await ids(`status=success&after=${d!.id}`)).toEqual([b!.id, a!.id]);
  });

  it('refuses bad input with the 400 envelope', async () => {
    const tenant = await api().newTenant();
    const other = await api().newTenant();
    const [theirs] = await store(other, [{ createdAt: T0 }]);
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=abc',
      'limit=2.5',
      'limit=',
      'after=req_nope',
      'after=',
      'after=req_%00',
      `after=${theirs!.id}`,
      'status=ok',
      'status=SUCCESS',
      'status=',
      'model=',
      'model=a%00b',
      'key_id=',
      'label=team',
      'label=',
      'label==red',
      'label=te%20am=red',
      'label=t%C3%A9am=red',
      `label=${'k'.repeat(65)}=v`,
      `label=team=${'v'.repeat(257)}`,
      'label=team=a%00',
    ]) {
      const res = await api().call(`/v1/generations?${query}`, { key: tenant.inferenceKey });
      expectError(res, 400, 'invalid_request');
      const field = query.slice(0, query.indexOf('='));
      expect(res.body.error.message, query).toContain(field);
    }
    expect((await list(tenant, `limit=200&label=${'k'.repeat(64)}=${'v'.repeat(256)}`)).data).toEqual([]);
    expectError(await api().call('/v1/generations'), 401, 'unauthenticated');
  });

  it('never shows another account’s records, and answers inference and provisioning keys alike', async () => {
    const tenant = await api().newTenant();
    const other = await api().newTenant();
    const [mine] = await store(tenant, [{ createdAt: T0, model: 'acme/fast', metadata: { team: 'red' } }]);
    await store(other, [
      { createdAt: T0 + 1, model: 'acme/fast', metadata: { team: 'red' } },
      { createdAt: T0 - 1, model: 'acme/fast', metadata: { team: 'red' } },
    ]);
    for (const query of ['', 'model=acme/fast', 'label=team=red', 'status=success', 'limit=200']) {
      const viaInference = await list(tenant, query);
      expect(idsOf(viaInference), query).toEqual([mine!.id]);
      expect(await list(tenant, query, tenant.provisioningKey)).toEqual(viaInference);
    }
    expect(idsOf(await list(other))).toHaveLength(2);
  });
});
