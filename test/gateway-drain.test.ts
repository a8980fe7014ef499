import type { Gateway, GatewayConfigInput } from '@tollgate/core';
import { FakeClock } from '@tollgate/core/testing';
import { createTestGateway, type TestGateway } from '@tollgate/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openaiCompletion } from './helpers/chat-wire.js';
import { parseSse, SseReader } from './helpers/sse.js';
import { type OpenedStorage, openSqlite } from './helpers/storage-variants.js';
import { createTenant, type Tenant } from './helpers/tenant.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are read as plain JSON.
type Json = any;

const GRACE_MS = 30_000;
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

const encoder = new TextEncoder();
const chunk = (delta: object, finish: string | null = null, usage: object | null = null) =>
  encoder.encode(
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm-1', choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], usage })}\n\n`,
  );

/** An upstream whose streams the test writes by hand, and whose non-streamed answers it releases. */
class ScriptedUpstream {
  streams: ReadableStreamDefaultController<Uint8Array>[] = [];
  pending: (() => void)[] = [];
  calls = 0;

  readonly fetch: typeof fetch = async (_input, init) => {
    this.calls += 1;
    const body = JSON.parse(String(init?.body)) as { stream?: boolean };
    if (!body.stream) {
      await new Promise<void>((resolve, reject) => {
        this.pending.push(resolve);
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      });
      return Response.json(openaiCompletion('late', { prompt_tokens: 3, completion_tokens: 1 }, 'm-1'));
    }
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.streams.push(controller);
        controller.enqueue(chunk({ role: 'assistant', content: '' }));
        controller.enqueue(chunk({ content: 'Hello there, ' }));
      },
    });
    return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
  };

  /** Ends the stream `i` with more text, a finish and usage. */
  finish(i: number): void {
    const controller = this.streams[i]!;
    controller.enqueue(chunk({ content: 'the rest of it.' }));
    controller.enqueue(chunk({}, 'stop'));
    controller.enqueue(chunk({}, null, { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 }));
    controller.enqueue(encoder.encode('data: [DONE]\n\n'));
    controller.close();
  }
}

describe('gateway.drain(): readiness first, in-flight calls finish or are cut and settled', () => {
  let opened: OpenedStorage;
  let kit: TestGateway;
  let gateway: Gateway;
  let tenant: Tenant;
  let clock: FakeClock;
  let upstream: ScriptedUpstream;

  beforeEach(async () => {
    clock = new FakeClock(Date.now());
    upstream = new ScriptedUpstream();
    opened = await openSqlite();
    tenant = await createTenant(opened.storage);
    kit = await createTestGateway(config, { storage: opened.storage, clock });
    kit.upstream('main').handle(upstream.fetch);
    ({ gateway } = kit);
  });

  afterEach(async () => {
    await kit.close();
    await opened.storage.close();
    await opened.dispose();
  });

  const chat = (stream: boolean) =>
    gateway.fetch(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.inferenceKey}` },
        body: JSON.stringify({
          model: 'acme/m',
          max_tokens: 100,
          stream,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      }),
    );
  const readyz = async () => {
    const response = await gateway.fetch(new Request('http://gateway.test/readyz'));
    return { status: response.status, body: await response.json() };
  };
  const holds = () => opened.storage.listReservations(tenant.account.id, clock.now());
  const charges = async () =>
    (await opened.storage.listLedgerEntries(tenant.account.id)).filter((e) => e.kind === 'charge');
  const recordOf = (id: string) => opened.storage.getRequestRecord(tenant.account.id, id);

  it('a stream in flight runs to its end and is charged once; drain() resolves after it, nothing cut', async () => {
    const response = await chat(true);
    const requestId = response.headers.get('x-gateway-request-id')!;
    const reader = new SseReader(response);
    await reader.readUntil((text) => text.includes('Hello there'));

    let drained = false;
    const drain = gateway.drain({ graceMs: GRACE_MS }).then((outcome) => {
      drained = true;
      return outcome;
    });
    expect(await readyz()).toEqual({ status: 503, body: { status: 'draining' } });
    expect(drained).toBe(false);

    upstream.finish(0);
    const text = await reader.readAll();
    expect(reader.content()).toBe('Hello there, the rest of it.');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(await drain).toEqual({ cut: 0 });
    const record = (await recordOf(requestId))!;
    expect(record).toMatchObject({ status: 'success', finishReason: 'stop' });
    expect((await charges()).map((e) => [e.requestId, -e.amountMicros])).toEqual([
      [requestId, record.costMicros],
    ]);
    expect(await holds()).toEqual([]);
  });

  it('at the end of the grace a stream is cut: event error shutting_down, settled as broken, charged for what it delivered', async () => {
    const response = await chat(true);
    const requestId = response.headers.get('x-gateway-request-id')!;
    const reader = new SseReader(response);
    await reader.readUntil((text) => text.includes('Hello there'));
    const [hold] = await holds();

    const drain = gateway.drain({ graceMs: GRACE_MS });
    clock.advance(GRACE_MS);
    const events = parseSse(await reader.readAll());
    const error = events.find((e) => e.event === 'error');
    expect(JSON.parse(error!.data).error).toMatchObject({ code: 'shutting_down', type: 'api_error' });
    const terminal = JSON.parse(events.at(-2)!.data) as Json;
    expect(terminal.choices[0]?.finish_reason ?? null).toBeNull();
    expect(events.at(-1)!.data).toBe('[DONE]');
    expect(await drain).toEqual({ cut: 1 });

    const record = (await recordOf(requestId))!;
    expect(record).toMatchObject({ status: 'broken_stream', httpStatus: 200, errorCode: 'shutting_down' });
    expect(record.costMicros).toBeGreaterThan(0);
    expect(record.costMicros).toBeLessThanOrEqual(hold!.amountMicros);
    expect(terminal.gateway.cost_micros).toBe(record.costMicros);
    expect((await charges()).map((e) => -e.amountMicros)).toEqual([record.costMicros]);
    expect(await holds()).toEqual([]);
  });

  it('at the end of the grace a call still waiting for its provider is abandoned: 503 shutting_down, nothing charged', async () => {
    const answer = chat(false);
    await vi.waitFor(() => expect(upstream.pending).toHaveLength(1), { timeout: 10_000, interval: 10 });
    const drain = gateway.drain({ graceMs: GRACE_MS });
    clock.advance(GRACE_MS);
    const response = await answer;
    expect(response.status).toBe(503);
    expect(((await response.json()) as Json).error.code).toBe('shutting_down');
    expect(await drain).toEqual({ cut: 1 });
    const record = (await recordOf(response.headers.get('x-gateway-request-id')!))!;
    expect(record).toMatchObject({
      status: 'error',
      httpStatus: 503,
      errorCode: 'shutting_down',
      costMicros: 0,
    });
    expect(await charges()).toEqual([]);
    expect(await holds()).toEqual([]);
  });

  it('requests that arrive while draining are still served', async () => {
    const drain = gateway.drain({ graceMs: GRACE_MS, accepting: new Promise(() => {}) });
    const response = await chat(true);
    const reader = new SseReader(response);
    await reader.readUntil((text) => text.includes('Hello there'));
    upstream.finish(0);
    await reader.readAll();
    expect(reader.content()).toBe('Hello there, the rest of it.');
    clock.advance(GRACE_MS);
    expect(await drain).toEqual({ cut: 0 });
  });
});
