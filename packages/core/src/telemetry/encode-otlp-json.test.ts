import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { encodeTraces, msToUnixNano, type OtlpAnyValue } from './encode-otlp-json.js';
import type { RequestSpan } from './request-span.js';
import { randomSpanIds } from './span-ids.js';

const fixedIds = () => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' });
const resource = { serviceName: 'tollgate', serviceVersion: '0.1.0' };

const failedSpan: RequestSpan = {
  name: 'chat anthropic/claude-sonnet-4',
  requestId: 'req_abc',
  startMs: 1_700_000_000_123,
  endMs: 1_700_000_001_456,
  status: 'error',
  errorCode: 'upstream_error',
  attributes: {
    'gen_ai.operation.name': 'chat',
    'gen_ai.usage.input_tokens': 149,
    'gateway.ttft_ms': 12.5,
    'gateway.stream': true,
    'gen_ai.response.finish_reasons': ['stop', 'length'],
    'gen_ai.response.model': null,
    'gateway.cost_micros': undefined,
  },
};

describe('encodeTraces', () => {
  it('encodes one span as the exact OTLP/JSON body', () => {
    expect(encodeTraces([failedSpan], resource, fixedIds)).toEqual({
      resourceSpans: [
        {
          resource: {
            attributes: [
              { key: 'service.name', value: { stringValue: 'tollgate' } },
              { key: 'service.version', value: { stringValue: '0.1.0' } },
            ],
            droppedAttributesCount: 0,
          },
          scopeSpans: [
            {
              scope: { name: 'tollgate', version: '0.1.0' },
              spans: [
                {
                  traceId: '0af7651916cd43dd8448eb211c80319c',
                  spanId: 'b7ad6b7169203331',
                  name: 'chat anthropic/claude-sonnet-4',
                  kind: 3,
                  startTimeUnixNano: '1700000000123000000',
                  endTimeUnixNano: '1700000001456000000',
                  attributes: [
                    { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
                    { key: 'gen_ai.usage.input_tokens', value: { intValue: 149 } },
                    { key: 'gateway.ttft_ms', value: { doubleValue: 12.5 } },
                    { key: 'gateway.stream', value: { boolValue: true } },
                    {
                      key: 'gen_ai.response.finish_reasons',
                      value: { arrayValue: { values: [{ stringValue: 'stop' }, { stringValue: 'length' }] } },
                    },
                  ],
                  droppedAttributesCount: 0,
                  events: [],
                  droppedEventsCount: 0,
                  status: { code: 2, message: 'upstream_error' },
                  links: [],
                  droppedLinksCount: 0,
                  flags: 257,
                },
              ],
            },
          ],
        },
      ],
    });
  });

  it('writes intValue as a JSON number and times as strings on the wire', () => {
    const json = JSON.stringify(encodeTraces([failedSpan], resource, fixedIds));
    expect(json).toContain('"intValue":149');
    expect(json).toContain('"startTimeUnixNano":"1700000000123000000"');
  });

  it('marks a successful span with status code 1 and no message', () => {
    const span = encodeTraces([{ ...failedSpan, status: 'ok', errorCode: undefined }], resource, fixedIds)
      .resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    expect(span.status).toEqual({ code: 1 });
  });

  it('gives every span its own ids from the generator, as lower-case hex of the right length', () => {
    const spans = encodeTraces([failedSpan, failedSpan, failedSpan], resource, randomSpanIds())
      .resourceSpans[0]!.scopeSpans[0]!.spans;
    for (const span of spans) {
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    }
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(3);
  });

  it('skips non-finite numbers and sends unsafe integers as doubles', () => {
    const span = encodeTraces(
      [
        {
          ...failedSpan,
          attributes: { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, big: 2 ** 60, neg: -3 },
        },
      ],
      resource,
      fixedIds,
    ).resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    expect(span.attributes).toEqual([
      { key: 'big', value: { doubleValue: 2 ** 60 } },
      { key: 'neg', value: { intValue: -3 } },
    ]);
  });

  it('leaves out everything on the span object except name, times, status and attributes', () => {
    const withExtras = { ...failedSpan, prompt: 'CANARY-PROMPT', attributes: { a: 1 } } as RequestSpan;
    const json = JSON.stringify(encodeTraces([withExtras], resource, fixedIds));
    expect(json).not.toContain('CANARY');
    // The request id is carried only as an attribute when the caller chooses to.
    expect(json).not.toContain('req_abc');
  });
});

describe('msToUnixNano', () => {
  it.each([
    [1_700_000_000_123, '1700000000123000000'],
    [1_795_346_443_992, '1795346443992000000'],
    // 8.64e15 ms, the largest Date: the float product 8.64e21 would print in exponent form.
    [8_640_000_000_000_000, '8640000000000000000000'],
    [0, '0'],
    [1.5, '1500000'],
    [-1, '0'],
    [Number.NaN, '0'],
  ])('%d ms is %s ns', (ms, nanos) => {
    expect(msToUnixNano(ms)).toBe(nanos);
  });
});

describe('encodeTraces against the official JS exporter body', () => {
  const fixtureUrl = new URL(
    '../../../../test/fixtures/wire/otlp-trace.otel-js-exporter-0.223.1.json',
    import.meta.url,
  );

  // The shape of a JSON value: object keys (sorted) and the kind of every leaf, values ignored.
  function shape(value: unknown): unknown {
    if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((key) => [key, shape((value as Record<string, unknown>)[key])]),
      );
    }
    return typeof value;
  }

  function valueKinds(attributes: { key: string; value: OtlpAnyValue }[]): Record<string, unknown> {
    return Object.fromEntries(attributes.map((a) => [a.key, shape(a.value)]));
  }

  it('has the same keys and value kinds as the fixture', async () => {
    const fixture = JSON.parse(await readFile(fixtureUrl, 'utf8'));
    const fixtureSpan = fixture.resourceSpans[0].scopeSpans[0].spans[0];
    // The fixture's own attributes, re-encoded through our encoder.
    const ours = encodeTraces(
      [
        {
          name: fixtureSpan.name,
          requestId: 'req_x',
          startMs: 1_795_346_443_992,
          endMs: 1_795_346_443_993,
          status: 'ok',
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.usage.input_tokens': 149,
            'http.response.status_code': 200,
            'gen_ai.request.temperature': 0.5,
            stream: true,
          },
        },
      ],
      { serviceName: 'llm-gateway', serviceVersion: '0.0.1' },
      () => ({ traceId: fixtureSpan.traceId, spanId: fixtureSpan.spanId }),
    );
    const ourSpan = ours.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;

    expect(Object.keys(ours).sort()).toEqual(Object.keys(fixture).sort());
    expect(Object.keys(ours.resourceSpans[0]!).sort()).toEqual(Object.keys(fixture.resourceSpans[0]).sort());
    expect(shape(ourSpan)).toEqual(shape(fixtureSpan));
    expect(valueKinds(ourSpan.attributes)).toEqual(valueKinds(fixtureSpan.attributes));
    expect(ourSpan.kind).toBe(fixtureSpan.kind);
    expect(ourSpan.flags).toBe(fixtureSpan.flags);
    expect(ourSpan.startTimeUnixNano).toBe(fixtureSpan.startTimeUnixNano);
    // Fixture's scope has name and version only; ours adds nothing else.
    expect(Object.keys(ours.resourceSpans[0]!.scopeSpans[0]!.scope).sort()).toEqual(
      Object.keys(fixture.resourceSpans[0].scopeSpans[0].scope).sort(),
    );
    // Ids are lower-case hex in both.
    expect(fixtureSpan.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(ourSpan.spanId).toMatch(/^[0-9a-f]{16}$/);
  });
});
