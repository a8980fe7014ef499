import { APIError } from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { attributesOf, LoopbackCollector } from './helpers/records-collector.js';
import {
  describeRecords,
  expectedCostMicros,
  getJson,
  PATHS,
  startRecordsGateway,
} from './helpers/records-gateway.js';
import { recordedOpenAiCompletion } from './helpers/records-wire.js';
import { storageVariants } from './helpers/storage-variants.js';
import type { Tenant } from './helpers/test-gateway.js';
import { fixtureWireBody, readFixture, sseEventsOf } from './helpers/wire-fixtures.js';

/** The body the official OTel JS exporter POSTs (see the fixtures README). */
const REFERENCE = JSON.parse(readFixture('otlp-trace.otel-js-exporter-0.223.1.json'));

/**
 * The type skeleton of a JSON value: objects as their sorted keys with each value's skeleton,
 * arrays as the skeleton of their first item, scalars as their JSON type. Two bodies with the same
 * skeleton are encoded the same way (strings where strings, numbers where numbers).
 */
function skeleton(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [skeleton(value[0])];
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, skeleton((value as Record<string, unknown>)[k])]),
    );
  }
  return value === null ? 'null' : typeof value;
}

/** The skeleton of an export with the attribute lists left out (their keys differ by design). */
// biome-ignore lint/suspicious/noExplicitAny: OTLP JSON.
function envelopeSkeleton(body: any): unknown {
  const copy = structuredClone(body);
  for (const rs of copy.resourceSpans) {
    rs.resource.attributes = [];
    for (const ss of rs.scopeSpans) for (const span of ss.spans) span.attributes = [];
  }
  return skeleton(copy);
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const NANOS = /^\d{19}$/;

async function failure(promise: Promise<unknown>): Promise<{ status: number; requestId: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) {
      return { status: error.status ?? 0, requestId: error.headers?.get('x-gateway-request-id') ?? '' };
    }
    throw error;
  }
  throw new Error('expected a failure');
}

let collector: LoopbackCollector;

describeRecords(
  'OTLP trace export: one span per request',
  (gw) => {
    let a: Tenant;
    const ids = { served: '', stream: '', failed: '', notFound: '', noCredit: '' };

    beforeAll(async () => {
      const gateway = gw();
      a = await gateway.newTenant({ name: 'otlp' });
      const client = gateway.client(a.inferenceKey);

      gateway.mock.enqueue(PATHS.oa, { kind: 'json', body: recordedOpenAiCompletion() });
      ids.served = (
        await client.chat.completions
          .create({ model: 'acme/chat', messages: [{ role: 'user', content: 'hi' }] })
          .withResponse()
      ).response.headers.get('x-gateway-request-id')!;

      gateway.mock.enqueue(
        PATHS.flaky,
        ...[1, 2, 3].map(() => ({
          kind: 'json' as const,
          status: 503,
          body: { error: { message: 'busy' } },
        })),
      );
      gateway.mock.enqueue(PATHS.an, {
        kind: 'sse',
        events: sseEventsOf(fixtureWireBody('anthropic-stream-text-then-tool-use.sse')),
      });
      const streamed = await client.chat.completions
        .create({
          model: 'acme/flaky',
          models: ['claude/sonnet'],
          stream: true,
          messages: [{ role: 'user', content: 'weather?' }],
        } as unknown as ChatCompletionCreateParamsStreaming)
        .withResponse();
      for await (const _ of streamed.data) {
        // drain
      }
      ids.stream = streamed.response.headers.get('x-gateway-request-id')!;

      gateway.mock.enqueue(PATHS.oa, {
        kind: 'raw',
        status: 400,
        body: readFixture('openai-error-400-unsupported-parameter.json'),
      });
      const failed = await failure(
        client.chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect(failed.status).toBe(400);
      ids.failed = failed.requestId;

      const notFound = await failure(
        client.chat.completions.create({ model: 'nope/missing', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect(notFound.status).toBe(404);
      ids.notFound = notFound.requestId;

      const poor = await gateway.newTenant({ name: 'otlp poor', creditMicros: 0 });
      const noCredit = await failure(
        gateway
          .client(poor.inferenceKey)
          .chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect(noCredit.status).toBe(402);
      ids.noCredit = noCredit.requestId;

      // Export is batched on a timer: wait until every request's span has arrived.
      await vi.waitFor(
        () => {
          for (const id of Object.values(ids)) expect(collector.spanOf(id), id).toBeDefined();
        },
        { timeout: 10_000, interval: 50 },
      );
    });

    it('POSTs JSON to <collector>/v1/traces', () => {
      expect(collector.exports.length).toBeGreaterThan(0);
      for (const e of collector.exports) {
        expect(e.method).toBe('POST');
        expect(e.path).toBe('/v1/traces');
        expect(e.headers['content-type']).toMatch(/^application\/json\b/);
        expect(e.body).toBeDefined();
      }
    });

    it('each request has exactly one span, served, failed and refused alike', () => {
      for (const id of Object.values(ids)) {
        const spans = collector.spans().filter((s) => attributesOf(s)['gateway.request_id'] === id);
        expect(spans, id).toHaveLength(1);
      }
    });

    it('the body has the structure the official OTel JS exporter sends', () => {
      for (const e of collector.exports) {
        expect(envelopeSkeleton(e.body)).toEqual(envelopeSkeleton(REFERENCE));
        for (const rs of e.body.resourceSpans) {
          const resource = attributesOf(rs.resource);
          expect(resource['service.name']).toBe('tollgate');
          for (const ss of rs.scopeSpans) {
            expect(typeof ss.scope.name).toBe('string');
            for (const span of ss.spans) {
              expect(span.traceId).toMatch(HEX32);
              expect(span.spanId).toMatch(HEX16);
              expect(span.startTimeUnixNano).toMatch(NANOS);
              expect(span.endTimeUnixNano).toMatch(NANOS);
              expect(BigInt(span.endTimeUnixNano) >= BigInt(span.startTimeUnixNano)).toBe(true);
              expect(span.kind).toBe(REFERENCE.resourceSpans[0].scopeSpans[0].spans[0].kind);
              // Integer attributes encoded as the reference does (`intValue` a JSON number).
              for (const { value } of span.attributes) {
                if ('intValue' in value) expect(typeof value.intValue).toBe('number');
              }
            }
          }
        }
      }
      const traceIds = collector.spans().map((s) => s.traceId);
      expect(new Set(traceIds).size).toBe(traceIds.length);
    });

    it('a served request: model, provider, tokens, finish reason, attempts, cost and duration; no TTFT', async () => {
      const span = collector.spanOf(ids.served);
      const attrs = attributesOf(span);
      expect(attrs).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'oa',
        'gen_ai.request.model': 'acme/chat',
        'gen_ai.response.model': 'acme/chat',
        'gen_ai.usage.input_tokens': 10122,
        'gen_ai.usage.output_tokens': 1,
        'gen_ai.response.finish_reasons': ['stop'],
        'gateway.attempts': 1,
        'gateway.cost_micros': expectedCostMicros('acme/chat', {
          prompt: 10122,
          completion: 1,
          cached: 9984,
        }),
      });
      expect(attrs['gateway.ttft_ms']).toBeUndefined();
      expect(span.status.code).not.toBe(2);
      const record = (await getJson(`${gw().url}/v1/generation?id=${ids.served}`, a.inferenceKey)).body.data;
      expect(attrs['gateway.duration_ms']).toBe(record.duration_ms);
      expect(Number(BigInt(span.startTimeUnixNano) / 1_000_000n)).toBe(Date.parse(record.created_at));
      expect(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)).toBe(
        BigInt(record.duration_ms) * 1_000_000n,
      );
    });

    it('a stream served after failover: requested vs served model, attempts, TTFT', async () => {
      const attrs = attributesOf(collector.spanOf(ids.stream));
      expect(attrs).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'an',
        'gen_ai.request.model': 'acme/flaky',
        'gen_ai.response.model': 'claude/sonnet',
        'gen_ai.usage.input_tokens': 377,
        'gen_ai.usage.output_tokens': 65,
        'gen_ai.response.finish_reasons': ['tool_calls'],
        'gateway.attempts': 4,
        'gateway.cost_micros': 2106,
      });
      const record = (await getJson(`${gw().url}/v1/generation?id=${ids.stream}`, a.inferenceKey)).body.data;
      expect(attrs['gateway.ttft_ms']).toBe(record.ttft_ms);
      expect(Number.isInteger(attrs['gateway.ttft_ms'])).toBe(true);
      expect(attrs['gateway.duration_ms']).toBe(record.duration_ms);
    });

    it('a failed request: an error span with its code, the attempt counted, nothing charged', () => {
      const span = collector.spanOf(ids.failed);
      const attrs = attributesOf(span);
      expect(span.status.code).toBe(2);
      expect(attrs).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'acme/chat',
        'gateway.attempts': 1,
        'gateway.cost_micros': 0,
        'error.type': 'invalid_request',
      });
      expect(attrs['gateway.duration_ms']).toEqual(expect.any(Number));
    });

    it('refusals (404 model, 402 credit): an error span each, zero attempts, zero cost', () => {
      for (const [id, code, model] of [
        [ids.notFound, 'model_not_found', 'nope/missing'],
        [ids.noCredit, 'insufficient_credit', 'acme/chat'],
      ] as const) {
        const span = collector.spanOf(id);
        const attrs = attributesOf(span);
        expect(span.status.code, id).toBe(2);
        expect(attrs, id).toMatchObject({
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': model,
          'gateway.attempts': 0,
          'gateway.cost_micros': 0,
          'error.type': code,
        });
        expect(attrs['gateway.duration_ms']).toEqual(expect.any(Number));
      }
    });
  },
  () => ({ otlp: { endpoint: collector.url, timeoutMs: 2_000 }, serve: false }),
);

beforeAll(async () => {
  collector = await new LoopbackCollector('answer').start();
});
afterAll(async () => {
  await collector?.stop();
});

for (const variant of storageVariants) {
  const skip = variant.skipReason;
  if (skip) console.info(`[e2e] "a hanging collector" on ${variant.name} is skipped: ${skip}`);
  describe.skipIf(Boolean(skip))(`OTLP export to a hanging collector [${variant.name}]`, () => {
    it('50 sequential requests complete while the collector answers nothing, one POST open at a time; close resolves', async () => {
      const hanging = await new LoopbackCollector('hang').start();
      const gateway = await startRecordsGateway(variant, {
        otlp: { endpoint: hanging.url, timeoutMs: 3_000 },
      });
      let closed = false;
      try {
        const tenant = await gateway.newTenant({ name: 'hang' });
        const client = gateway.client(tenant.inferenceKey);
        gateway.mock.setDefault(PATHS.oa, { kind: 'json', body: recordedOpenAiCompletion() });
        await client.chat.completions.create({
          model: 'acme/chat',
          messages: [{ role: 'user', content: 'first' }],
        });
        // The exporter's first POST is now stuck at the collector.
        await vi.waitFor(() => expect(hanging.open).toBe(1), { timeout: 10_000, interval: 20 });

        let completed = 0;
        for (let i = 0; i < 50; i++) {
          const completion = await client.chat.completions.create({
            model: 'acme/chat',
            messages: [{ role: 'user', content: `n${i}` }],
          });
          expect(completion.choices[0]?.message.content).toBe('ok');
          completed += 1;
        }
        expect(completed).toBe(50);
        expect(hanging.answered).toBe(0);
        expect(hanging.maxOpen).toBe(1);

        await gateway.close();
        closed = true;
        expect(hanging.answered).toBe(0);
        expect(hanging.maxOpen).toBe(1);
      } finally {
        if (!closed) await gateway.close();
        await hanging.stop();
      }
    });
  });
}
