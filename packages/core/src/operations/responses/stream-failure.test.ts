import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { UpstreamError } from '../../providers/upstream-error.js';
import { streamFailure } from './stream-failure.js';

function broken(message: string, cause?: unknown): GatewayError {
  const error = new GatewayError('upstream_error', message);
  if (cause !== undefined) error.cause = cause;
  return error;
}

describe('streamFailure', () => {
  it.each([
    ['a broken connection', broken('The provider stream broke: connection lost'), 'server_error'],
    [
      'a stall',
      new GatewayError('upstream_timeout', 'The provider stream stalled: 60000 ms'),
      'server_error',
    ],
    [
      'an upstream code of the five',
      broken(
        'The provider stream broke: too long',
        new UpstreamError('network', 'too long', null, null, 'context_length_exceeded'),
      ),
      'context_length_exceeded',
    ],
    [
      'insufficient_quota',
      broken('x', new UpstreamError('network', 'quota', null, null, 'insufficient_quota')),
      'insufficient_quota',
    ],
    [
      'an upstream code of another kind',
      broken('x', new UpstreamError('network', 'overloaded', null, null, 'overloaded_error')),
      'server_error',
    ],
    [
      'an output guardrail',
      new GatewayError('guardrail_blocked', 'The guardrail "pii" blocked…'),
      'invalid_prompt',
    ],
  ])('%s → %s', (_, error, code) => {
    expect(streamFailure(error)).toEqual({ code, message: error.message });
  });

  it('rate limits say when to try again, from Retry-After, else in 1s', () => {
    const told = broken(
      'Rate limit reached. Please try again in 20s.',
      new UpstreamError('network', 'x', null, null, 'rate_limit_exceeded'),
    );
    expect(streamFailure(told)).toEqual({ code: 'rate_limit_exceeded', message: told.message });
    const untold = broken(
      'The provider stream broke: slow down',
      new UpstreamError('network', 'x', null, 2_500, 'rate_limit_error'),
    );
    expect(streamFailure(untold)).toEqual({
      code: 'rate_limit_exceeded',
      message: 'The provider stream broke: slow down. Please try again in 3s.',
    });
    const bare = broken(
      'Too many requests.',
      new UpstreamError('network', 'x', null, null, 'rate_limit_exceeded'),
    );
    expect(streamFailure(bare).message).toBe('Too many requests. Please try again in 1s.');
  });
});
