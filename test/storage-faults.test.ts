import type { GatewayConfigInput, Storage } from '@tollgate/core';
import { createTestGateway, type FakeClock, type TestGateway } from '@tollgate/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openaiCompletion } from './helpers/chat-wire.js';
import { expectError } from './helpers/http.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are read as plain JSON.
type Json = any;

const DEADLINE_MS = 5_000;

const config: GatewayConfigInput = {
  providers: { main: { format: 'openai', base_url: 'http://upstream.test/v1', api_key: 'sk-main' } },
  models: [
    {
      id: 'acme/m',
      max_output_tokens: 1000,
      endpoints: [{ provider: 'main', upstream_model: 'm-1', pricing: { prompt: '1', completion: '2' } }],
    },
  ],
};

const completion = openaiCompletion('hello', { prompt_tokens: 10, completion_tokens: 5 }, 'm-1');

/**
 * The real storage, except that the methods named in `stalled` do not reach it until `release()`
 * (as a database that stopped answering and then came back), and those in `failing` reject with
 * the given driver error (as a full disk does) before reaching it.
 */
class FaultyStorage {
  readonly stalled = new Set<string>();
  readonly failing = new Map<string, Error>();
  /** Method names that have been called and are waiting. */
  readonly waiting: string[] = [];
  private gates: (() => void)[] = [];

  wrap(storage: Storage): Storage {
    return new Proxy(storage, {
      get: (target, property) => {
        const value = Reflect.get(target, property, target);
        if (typeof value !== 'function' || typeof property !== 'string') return value;
        return (...args: unknown[]) => {
          const failure = this.failing.get(property);
          if (failure) return Promise.reject(failure);
          if (!this.stalled.has(property)) return value.apply(target, args);
          this.waiting.push(property);
          return new Promise<void>((resolve) => this.gates.push(resolve)).then(() =>
            value.apply(target, args),
          );
        };
      },
    });
  }

  /** The stalled calls go on to the database. */
  release(): void {
    this.stalled.clear();
    for (const open of this.gates.splice(0)) open();
  }
}

const full = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });

describe('storage faults, in-process: 503 storage_unavailable, nothing upstream, holds settled', () => {
  let gw: TestGateway;
  let clock: FakeClock;
  let faulty: FaultyStorage;
  const upstreamCalls = () => gw.upstream('main').calls.length;

  beforeEach(async () => {
    faulty = new FaultyStorage();
    // The gateway sees the faulty storage; the test reads the real one underneath (gw.storage).
    gw = await createTestGateway(config, {
      wrapStorage: (storage) => faulty.wrap(storage),
      gateway: {
        storageTimeoutMs: DEADLINE_MS,
        // Every model call reads its key from storage (no cached authentication in between).
        authCacheMs: 0,
      },
    });
    gw.upstream('main').always(200, completion);
    clock = gw.clock;
  });

  afterEach(async () => {
    faulty.release();
    await gw.close();
  });

  const chat = (extra: Record<string, unknown> = {}) =>
    gw.request('/v1/chat/completions', {
      model: 'acme/m',
      messages: [{ role: 'user', content: 'hi' }],
      ...extra,
    });
  const get = (path: string) => gw.fetch(new Request(`http://gateway.test${path}`));
  const asApi = async (response: Response) => {
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: JSON.parse(text) as Json };
  };
  /** Waits (bounded) until `method` was called and is stalled. */
  const stalledOn = async (method: string) => {
    for (let i = 0; i < 1_000 && !faulty.waiting.includes(method); i++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(faulty.waiting).toContain(method);
  };
  const ledgerCharges = async () =>
    (await gw.storage.listLedgerEntries(gw.accountId)).filter((e) => e.kind === 'charge');
  const balance = async () => (await gw.storage.getAccount(gw.accountId))!.balanceMicros;
  /** Polls (bounded) until `test` holds: what the gateway does once storage answers again. */
  const eventually = (test: () => Promise<boolean>) =>
    vi.waitFor(
      async () => {
        if (!(await test())) throw new Error('not yet');
      },
      { timeout: 10_000, interval: 20 },
    );

  it('the hold stalls: 503 at the deadline, nothing upstream; the hold that lands later is settled, uncharged', async () => {
    const before = await balance();
    faulty.stalled.add('reserveCredit');
    const answer = chat();
    await stalledOn('reserveCredit');
    clock.advance(DEADLINE_MS);
    const response = await asApi(await answer);
    expectError(response, 503, 'storage_unavailable');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(upstreamCalls()).toBe(0);
    expect((await get('/healthz')).status).toBe(503);

    // The database comes back and the hold lands after all: it is settled at once, nothing charged.
    faulty.release();
    const requestId = response.body.error.request_id;
    await eventually(async () => (await gw.storage.listReservations(gw.accountId, Date.now())).length === 0);
    await eventually(async () => (await gw.storage.getRequestRecord(gw.accountId, requestId)) !== null);
    const record = await gw.storage.getRequestRecord(gw.accountId, requestId);
    expect(record).toMatchObject({
      status: 'refused',
      httpStatus: 503,
      errorCode: 'storage_unavailable',
      costMicros: 0,
    });
    expect(await ledgerCharges()).toEqual([]);
    expect(await balance()).toBe(before);
  });

  it('authentication stalls: 503 at the deadline, nothing upstream', async () => {
    faulty.stalled.add('findApiKeyByHash');
    const answer = chat();
    await stalledOn('findApiKeyByHash');
    clock.advance(DEADLINE_MS);
    expectError(await asApi(await answer), 503, 'storage_unavailable');
    expect(upstreamCalls()).toBe(0);
  });

  it('the settle stalls after the provider answered: 503, never two charges, no hold left', async () => {
    const before = await balance();
    faulty.stalled.add('settleRequest');
    const answer = chat();
    await stalledOn('settleRequest');
    clock.advance(DEADLINE_MS);
    const response = await asApi(await answer);
    expectError(response, 503, 'storage_unavailable');
    expect(upstreamCalls()).toBe(1);

    // Whichever lands first, the late settle or the failure's record and release, counts alone.
    faulty.release();
    const requestId = response.body.error.request_id;
    await eventually(async () => (await gw.storage.listReservations(gw.accountId, Date.now())).length === 0);
    await eventually(async () => {
      const record = await gw.storage.getRequestRecord(gw.accountId, requestId);
      return record !== null && record.status !== 'in_progress';
    });
    const record = (await gw.storage.getRequestRecord(gw.accountId, requestId))!;
    const charges = await ledgerCharges();
    expect(charges.length).toBeLessThanOrEqual(1);
    expect(charges.reduce((sum, e) => sum - e.amountMicros, 0)).toBe(record.costMicros);
    expect(await balance()).toBe(before - record.costMicros);
  });

  it('out of space: 503 storage_unavailable, never 500; /healthz and /readyz 503 until a request writes again', async () => {
    // Every write that needs room fails; one row rewritten in place (the probe) still commits.
    for (const method of ['reserveCredit', 'insertRequestRecord', 'hitRateLimit']) {
      faulty.failing.set(method, full());
    }
    expectError(await asApi(await chat()), 503, 'storage_unavailable');
    expect(upstreamCalls()).toBe(0);
    clock.advance(1_000);
    expect(await asApi(await get('/healthz'))).toMatchObject({
      status: 503,
      body: { status: 'unavailable', reason: 'storage cannot write' },
    });
    expect((await get('/readyz')).status).toBe(503);

    faulty.failing.clear();
    expect((await chat()).status).toBe(200);
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/readyz')).status).toBe(200);
  });

  it('out of space on the settle: 503, nothing charged, and the request is on record once space returns', async () => {
    const before = await balance();
    faulty.failing.set('settleRequest', full());
    const response = await asApi(await chat());
    expectError(response, 503, 'storage_unavailable');
    const requestId = response.body.error.request_id;
    await eventually(async () => {
      const record = await gw.storage.getRequestRecord(gw.accountId, requestId);
      return record !== null && record.status !== 'in_progress';
    });
    expect(await gw.storage.getRequestRecord(gw.accountId, requestId)).toMatchObject({
      status: 'error',
      httpStatus: 503,
      errorCode: 'storage_unavailable',
      costMicros: 0,
    });
    expect(await gw.storage.listReservations(gw.accountId, Date.now())).toEqual([]);
    expect(await balance()).toBe(before);
  });
});
