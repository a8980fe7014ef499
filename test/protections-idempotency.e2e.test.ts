import { randomBytes } from 'node:crypto';
import { topUpAccount } from '@tollgate/core';
import Database from 'better-sqlite3';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ApiResponse, call, expectError } from './helpers/http.js';
import {
  chat,
  fail,
  heldOk,
  ok,
  type RoutingGateway,
  startRoutingGateway,
  upstreamPath,
} from './helpers/routing-gateway.js';
import type { Tenant } from './helpers/test-gateway.js';
import { fixtureWireBody, sseEventsOf } from './helpers/wire-fixtures.js';

const STREAM_EVENTS = sseEventsOf(fixtureWireBody('openai-chat-stream-text-include-usage.chunks.txt'));

let gw: RoutingGateway;

beforeAll(async () => {
  gw = await startRoutingGateway();
});

afterAll(async () => {
  await gw?.close();
});

beforeEach(() => {
  gw.mock.reset();
  gw.clock.reset();
});

const freshKey = () => `idem-${randomBytes(8).toString('hex')}`;

function chatCall(
  key: string,
  idempotencyKey: string | null,
  body: Record<string, unknown> = chat('acme/paid'),
  signal?: AbortSignal,
): Promise<ApiResponse> {
  if (signal) {
    // `call` has no signal; a bare fetch for the request the test abandons.
    return fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...(idempotencyKey !== null && { 'idempotency-key': idempotencyKey }),
      },
      body: JSON.stringify(body),
      signal,
    }).then(async (r) => ({ status: r.status, headers: r.headers, body: undefined, text: await r.text() }));
  }
  return call(gw.url, '/v1/chat/completions', {
    key,
    json: body,
    ...(idempotencyKey !== null && { headers: { 'Idempotency-Key': idempotencyKey } }),
  });
}

async function charges(tenant: Tenant) {
  return (await gw.ledger(tenant.account.id)).filter((e) => e.kind === 'charge');
}

function requestIdOf(response: ApiResponse): string {
  const id = response.headers.get('x-gateway-request-id') ?? '';
  expect(id).toMatch(/^req_/);
  return id;
}

describe('Idempotency-Key (spec "Idempotency claim")', () => {
  it('completed → the same key again gets the stored body, the ORIGINAL request id and X-Gateway-Idempotent-Replay: true; one upstream call, one charge', async () => {
    const tenant = await gw.newTenant();
    const key = freshKey();
    gw.mock.enqueue(upstreamPath('p1'), ok('the one answer'), ok('a second answer must not be asked for'));
    const first = await chatCall(tenant.inferenceKey, key);
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('x-gateway-idempotent-replay')).toBeNull();
    const second = await chatCall(tenant.inferenceKey, key);
    expect(second.status, second.text).toBe(200);
    expect(second.headers.get('x-gateway-idempotent-replay')).toBe('true');
    expect(second.headers.get('x-gateway-request-id')).toBe(requestIdOf(first));
    expect(second.text).toBe(first.text);
    expect(second.body.choices[0].message.content).toBe('the one answer');
    expect(second.headers.get('x-gateway-cost-usd')).toBe(first.headers.get('x-gateway-cost-usd'));
    expect(gw.mock.received).toHaveLength(1);
    const charged = await charges(tenant);
    expect(charged).toHaveLength(1);
    expect(charged[0]!.requestId).toBe(requestIdOf(first));
  });

  it('the official SDK sees a replay as the same completion', async () => {
    const tenant = await gw.newTenant();
    const client = gw.client(tenant.inferenceKey);
    const key = freshKey();
    gw.mock.enqueue(upstreamPath('p1'), ok('sdk answer'));
    const body = chat('acme/paid') as ChatCompletionCreateParamsNonStreaming;
    const a = await client.chat.completions
      .create(body, { headers: { 'Idempotency-Key': key } })
      .withResponse();
    const b = await client.chat.completions
      .create(body, { headers: { 'Idempotency-Key': key } })
      .withResponse();
    expect(b.data).toEqual(a.data);
    expect(b.response.headers.get('x-gateway-idempotent-replay')).toBe('true');
    expect(gw.mock.received).toHaveLength(1);
  });

  it('in flight → a duplicate while the first is still upstream gets 409 request_in_flight with Retry-After: 1', async () => {
    const tenant = await gw.newTenant();
    const key = freshKey();
    gw.mock.enqueue(upstreamPath('p1'), heldOk('held'), ok('must not be asked for'));
    const first = chatCall(tenant.inferenceKey, key);
    await vi.waitFor(() => expect(gw.mock.received).toHaveLength(1), { timeout: 10_000, interval: 10 });
    const duplicate = await chatCall(tenant.inferenceKey, key);
    expectError(duplicate, 409, 'request_in_flight');
    expect(duplicate.headers.get('retry-after')).toBe('1');
    expect(gw.mock.received, 'the duplicate was not sent upstream').toHaveLength(1);
    gw.mock.release();
    const done = await first;
    expect(done.status, done.text).toBe(200);
    // Once completed, the same key replays.
    const replay = await chatCall(tenant.inferenceKey, key);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('x-gateway-idempotent-replay')).toBe('true');
    expect(replay.headers.get('x-gateway-request-id')).toBe(requestIdOf(done));
    expect(gw.mock.received).toHaveLength(1);
    expect(await charges(tenant)).toHaveLength(1);
  });

  it('six concurrent requests with one key: exactly one goes upstream, the other five get 409', async () => {
    const tenant = await gw.newTenant();
    const key = freshKey();
    gw.mock.enqueue(upstreamPath('p1'), heldOk('the only one'));
    gw.mock.setDefault(upstreamPath('p1'), ok('must not be asked for'));
    const settled: ApiResponse[] = [];
    const all = Array.from({ length: 6 }, () =>
      chatCall(tenant.inferenceKey, key).then((response) => {
        settled.push(response);
        return response;
      }),
    );
    await vi.waitFor(
      () => {
        expect(gw.mock.received).toHaveLength(1);
        expect(settled).toHaveLength(5);
      },
      { timeout: 10_000, interval: 20 },
    );
    for (const refused of settled) {
      expectError(refused, 409, 'request_in_flight');
      expect(refused.headers.get('retry-after')).toBe('1');
    }
    gw.mock.release();
    const responses = await Promise.all(all);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(gw.mock.received).toHaveLength(1);
    expect(await charges(tenant)).toHaveLength(1);
  });

  it('a request refused 402 releases its claim at once: the same key then runs fresh', async () => {
    const tenant = await gw.newTenant({ creditMicros: 0 });
    const key = freshKey();
    gw.mock.enqueue(upstreamPath('p1'), ok('after the top-up'));
    expectError(await chatCall(tenant.inferenceKey, key), 402, 'insufficient_credit');
    await topUpAccount(gw.storage, tenant.account.id, 5_000_000, 0);
    const again = await chatCall(tenant.inferenceKey, key);
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get('x-gateway-idempotent-replay')).toBeNull();
    expect(again.body.choices[0].message.content).toBe('after the top-up');
    expect(gw.mock.received).toHaveLength(1);
  });

  it('a request refused 404 (unknown model) releases its claim at once: the same key is not "in flight"', async () => {
    const tenant = await gw.newTenant();
    const key = freshKey();
    expectError(await chatCall(tenant.inferenceKey, key, chat('acme/nope')), 404, 'model_not_found');
    // Still held, it would be 409; released, the request runs again (and is refused again).
    expectError(await chatCall(tenant.inferenceKey, key, chat('acme/nope')), 404, 'model_not_found');
  });

  it('a request whose every route failed releases its claim at once: the same key then runs fresh, charged once', async () => {
    const tenant = await gw.newTenant();
    const key = freshKey();
    gw.mock.enqueue(upstreamPath('p1'), fail(500), fail(500), fail(500), ok('second time lucky'));
    const failed = await chatCall(tenant.inferenceKey, key);
    expectError(failed, 502, 'upstream_error');
    const again = await chatCall(tenant.inferenceKey, key);
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get('x-gateway-idempotent-replay')).toBeNull();
    expect(again.body.choices[0].message.content).toBe('second time lucky');
    expect(requestIdOf(again)).not.toBe(requestIdOf(failed));
    expect(gw.mock.received).toHaveLength(4);
    expect(await charges(tenant)).toHaveLength(1);
  });

  it('a caller that hangs up while upstream releases the claim: the same key then runs fresh', async () => {
    const tenant = await gw.newTenant();
    const key = freshKey();
    gw.mock.enqueue(upstreamPath('p1'), { kind: 'hang' }, ok('after the hang-up'));
    const abandon = new AbortController();
    const first = chatCall(tenant.inferenceKey, key, chat('acme/paid'), abandon.signal).catch(
      (error: unknown) => error,
    );
    await vi.waitFor(() => expect(gw.mock.received).toHaveLength(1), { timeout: 10_000, interval: 10 });
    abandon.abort();
    expect(await first).toBeInstanceOf(Error);
    // The release follows the hang-up asynchronously; until then the key answers 409.
    const again = await vi.waitFor(
      async () => {
        const response = await chatCall(tenant.inferenceKey, key);
        expect(response.status, response.text).not.toBe(409);
        return response;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(again.status, again.text).toBe(200);
    expect(again.body.choices[0].message.content).toBe('after the hang-up');
    expect(gw.mock.received).toHaveLength(2);
    expect(await charges(tenant)).toHaveLength(1);
  });

  it('an in-flight claim older than about 5 minutes counts as abandoned: the same key runs again', async () => {
    const tenant = await gw.newTenant();
    const key = freshKey();
    const start = Date.now();
    gw.clock.frozenAt = start;
    gw.mock.enqueue(upstreamPath('p1'), heldOk('the slow first'), ok('the second'));
    const first = chatCall(tenant.inferenceKey, key);
    await vi.waitFor(() => expect(gw.mock.received).toHaveLength(1), { timeout: 10_000, interval: 10 });
    expectError(await chatCall(tenant.inferenceKey, key), 409, 'request_in_flight');
    // As if the first request's process had died: 5 minutes and a second later, the claim is stale.
    gw.clock.frozenAt = start + 5 * 60_000 + 1_000;
    const second = await chatCall(tenant.inferenceKey, key);
    expect(second.status, second.text).toBe(200);
    expect(second.body.choices[0].message.content).toBe('the second');
    expect(second.headers.get('x-gateway-idempotent-replay')).toBeNull();
    // The first one finishing late does not overwrite the second's stored answer.
    gw.mock.release();
    expect((await first).status).toBe(200);
    const replay = await chatCall(tenant.inferenceKey, key);
    expect(replay.headers.get('x-gateway-idempotent-replay')).toBe('true');
    expect(replay.headers.get('x-gateway-request-id')).toBe(requestIdOf(second));
    expect(replay.body.choices[0].message.content).toBe('the second');
  });

  it('a completed key is replayed for 24 hours; after that the same string is a fresh key', async () => {
    const tenant = await gw.newTenant();
    const key = freshKey();
    const start = Date.now();
    gw.clock.frozenAt = start;
    gw.mock.enqueue(upstreamPath('p1'), ok('day one'), ok('day two'));
    const first = await chatCall(tenant.inferenceKey, key);
    expect(first.body.choices[0].message.content).toBe('day one');
    gw.clock.frozenAt = start + 24 * 3_600_000 - 60_000;
    const replay = await chatCall(tenant.inferenceKey, key);
    expect(replay.headers.get('x-gateway-idempotent-replay')).toBe('true');
    expect(replay.body.choices[0].message.content).toBe('day one');
    gw.clock.frozenAt = start + 24 * 3_600_000 + 60_000;
    const fresh = await chatCall(tenant.inferenceKey, key);
    expect(fresh.status, fresh.text).toBe(200);
    expect(fresh.headers.get('x-gateway-idempotent-replay')).toBeNull();
    expect(fresh.body.choices[0].message.content).toBe('day two');
    expect(gw.mock.received).toHaveLength(2);
    expect(await charges(tenant)).toHaveLength(2);
  });

  it('stream: true ignores the header (no claim): two upstream calls, two charges, no replay', async () => {
    const tenant = await gw.newTenant();
    const key = freshKey();
    gw.mock.enqueue(
      upstreamPath('p1'),
      { kind: 'sse', events: STREAM_EVENTS },
      { kind: 'sse', events: STREAM_EVENTS },
    );
    const body = { ...chat('acme/paid'), stream: true };
    const a = await chatCall(tenant.inferenceKey, key, body);
    const b = await chatCall(tenant.inferenceKey, key, body);
    for (const response of [a, b]) {
      expect(response.status).toBe(200);
      expect(response.text).toContain('data: [DONE]');
      expect(response.headers.get('x-gateway-idempotent-replay')).toBeNull();
    }
    expect(requestIdOf(b)).not.toBe(requestIdOf(a));
    expect(gw.mock.received).toHaveLength(2);
    expect(await charges(tenant)).toHaveLength(2);
  });

  it('another account with the same key string is independent', async () => {
    const alice = await gw.newTenant({ name: 'alice' });
    const bob = await gw.newTenant({ name: 'bob' });
    const key = freshKey();
    gw.mock.enqueue(upstreamPath('p1'), ok('for alice'), ok('for bob'));
    const a = await chatCall(alice.inferenceKey, key);
    const b = await chatCall(bob.inferenceKey, key);
    expect(a.body.choices[0].message.content).toBe('for alice');
    expect(b.body.choices[0].message.content).toBe('for bob');
    expect(b.headers.get('x-gateway-idempotent-replay')).toBeNull();
    expect(gw.mock.received).toHaveLength(2);
    // Each account replays its own answer.
    const aliceAgain = await chatCall(alice.inferenceKey, key);
    const bobAgain = await chatCall(bob.inferenceKey, key);
    expect(aliceAgain.body.choices[0].message.content).toBe('for alice');
    expect(bobAgain.body.choices[0].message.content).toBe('for bob');
    expect(aliceAgain.headers.get('x-gateway-request-id')).toBe(requestIdOf(a));
    expect(bobAgain.headers.get('x-gateway-request-id')).toBe(requestIdOf(b));
    expect(gw.mock.received).toHaveLength(2);
    expect(await charges(alice)).toHaveLength(1);
    expect(await charges(bob)).toHaveLength(1);
  });

  it('a malformed Idempotency-Key (over 255 characters) → 400 invalid_request, nothing sent upstream', async () => {
    const tenant = await gw.newTenant();
    gw.mock.enqueue(upstreamPath('p1'), ok());
    expectError(await chatCall(tenant.inferenceKey, 'k'.repeat(300)), 400, 'invalid_request');
    expect(gw.mock.received).toEqual([]);
  });

  it('the stored response in the database holds neither the completion text nor the key string', async () => {
    const tenant = await gw.newTenant();
    const key = freshKey();
    const secret = `completion-secret-${randomBytes(6).toString('hex')}`;
    gw.mock.enqueue(upstreamPath('p1'), ok(secret));
    const first = await chatCall(tenant.inferenceKey, key);
    expect(first.body.choices[0].message.content).toBe(secret);
    const replay = await chatCall(tenant.inferenceKey, key);
    expect(replay.body.choices[0].message.content).toBe(secret);

    // The raw bytes of the SQLite file and its WAL.
    const bytes = await gw.opened.dump();
    expect(bytes.includes(secret), 'completion text in the database file').toBe(false);
    expect(bytes.includes(key), 'Idempotency-Key string in the database file').toBe(false);

    // And the idempotency table itself: one completed row for the account, its body opaque.
    const db = new Database(gw.opened.path, { readonly: true, fileMustExist: true });
    try {
      const rows = db
        .prepare('SELECT * FROM idempotency_claims WHERE account_id = ?')
        .all(tenant.account.id) as Record<string, unknown>[];
      expect(rows).toHaveLength(1);
      const text = JSON.stringify(rows);
      expect(text).not.toContain(secret);
      expect(text).not.toContain(key);
      expect(text).not.toContain('"content"');
      expect(rows[0]!.state).toBe('completed');
    } finally {
      db.close();
    }
  });

  it('the official SDK retrying after a network drop (same Idempotency-Key) gets one answer, charged once', async () => {
    const tenant = await gw.newTenant();
    // The SDK gives up on an attempt after 1.5 s and retries (up to 2 more times), resending the
    // per-request Idempotency-Key header each time.
    const client = gw.client(tenant.inferenceKey, { maxRetries: 2, timeout: 1_500 });
    const key = freshKey();
    // Upstream: the first call hangs past the SDK timeout; the next one answers.
    gw.mock.enqueue(upstreamPath('p1'), { kind: 'hang' }, ok('after the drop'));
    const completion = await client.chat.completions.create(
      chat('acme/paid') as ChatCompletionCreateParamsNonStreaming,
      {
        headers: { 'Idempotency-Key': key },
      },
    );
    expect(completion.choices[0]?.message.content).toBe('after the drop');
    // What the mock saw: (1) the first attempt, left hanging; the SDK then drops its connection,
    // the gateway abandons the walk (aborting that upstream call) and releases the claim.
    // (2) The SDK's retry claims the key afresh and is answered. If the retry outran the release
    // it got 409 request_in_flight (Retry-After: 1), which the SDK also retries, without reaching
    // the provider. Either way: exactly two upstream calls, one answer, one charge.
    expect(gw.mock.received).toHaveLength(2);
    expect(await charges(tenant)).toHaveLength(1);
    // A further retry with the same key is a replay of that one answer.
    const again = await chatCall(tenant.inferenceKey, key);
    expect(again.headers.get('x-gateway-idempotent-replay')).toBe('true');
    expect(again.body.choices[0].message.content).toBe('after the drop');
    expect(gw.mock.received).toHaveLength(2);
    expect(await charges(tenant)).toHaveLength(1);
  });
});
