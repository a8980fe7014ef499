import { describe, expect, it } from 'vitest';
import { exportRequestSpan } from '../../pipeline/request-log.js';
import type { RequestRecord } from '../../storage/metering-types.js';
import { consoleLogger } from '../../telemetry/gateway-logger.js';
import { RequestObservers } from '../../telemetry/request-observer.js';
import type { RequestSpan } from '../../telemetry/request-span.js';

const record = (guardrails: RequestRecord['guardrails']) =>
  ({
    id: 'req_1',
    model: 'acme/chat',
    provider: null,
    promptTokens: 0,
    completionTokens: 0,
    cachedTokens: 0,
    finishReason: null,
    attempts: 0,
    costMicros: 0,
    ttftMs: null,
    durationMs: 1,
    httpStatus: 422,
    errorCode: 'guardrail_blocked',
    stream: false,
    createdAt: 0,
    guardrails,
  }) as unknown as RequestRecord;

function spanOf(r: RequestRecord): RequestSpan {
  const spans: RequestSpan[] = [];
  exportRequestSpan(
    { spans: { export: (span) => spans.push(span) }, observers: new RequestObservers({}, consoleLogger) },
    r,
    'acme/chat',
  );
  return spans[0]!;
}

describe('the request span and the guardrail verdict', () => {
  it('carries the verdict as JSON in gateway.guardrails when a rule fired, and no such attribute otherwise', () => {
    const verdict = [
      { rule_id: 'grd_1', name: 'no cards', category: 'payment_card', stage: 'input' },
    ] as const;
    const span = spanOf(record([...verdict]));
    expect(JSON.parse(String(span.attributes['gateway.guardrails']))).toEqual(verdict);
    expect(span.attributes['error.type']).toBe('guardrail_blocked');
    expect(spanOf(record([])).attributes['gateway.guardrails']).toBeUndefined();
  });
});
