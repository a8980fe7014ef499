import { describe, expect, it } from 'vitest';
import { meteredUsage } from '../metering/usage.js';
import { forwardBatch, StreamDelivery, streamUsage } from './stream-delivery.js';

const worst = meteredUsage({ promptTokens: 100, completionTokens: 50 });

describe('StreamDelivery', () => {
  it('counts a chunk as delivered only once the consumer comes back', () => {
    const delivery = new StreamDelivery();
    let clockReads = 0;
    const elapsed = () => ++clockReads * 10;
    delivery.handedOver({ chars: 8, produced: true, finishReason: null }, elapsed);
    expect(delivery.deliveredChars).toBe(0);
    delivery.confirm();
    delivery.handedOver({ chars: 4, produced: false, finishReason: 'stop' }, elapsed);
    expect(delivery).toMatchObject({ deliveredChars: 8, producedOutput: true, finishReason: 'stop' });
    // The time to the first chunk is read once, at the first chunk.
    expect(delivery.ttftMs).toBe(10);
    expect(clockReads).toBe(1);
  });
});

describe('streamUsage', () => {
  it('charges the report of a complete stream', () => {
    const reported = { promptTokens: 7, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 3 };
    expect(streamUsage('complete', reported, worst, 400)).toEqual(meteredUsage(reported));
  });

  it('charges a stream never read at the completion ceiling, else over what was delivered', () => {
    expect(streamUsage('cancelled', null, worst, 0).completionTokens).toBe(50);
    expect(streamUsage('cancelled', null, worst, 40).completionTokens).toBe(10);
    expect(streamUsage('broken', null, worst, 0).completionTokens).toBe(0);
  });
});

describe('forwardBatch', () => {
  it('before any output, takes nothing after the first chunk with output', () => {
    const ready = ['b', 'c', 'd'];
    const seen: unknown[] = [];
    let produced = false;
    const forward = (chunk: unknown) => {
      seen.push(chunk);
      if (chunk === 'b') produced = true;
      return true;
    };
    const take = (max?: number) => ready.splice(0, max ?? ready.length);
    expect(forwardBatch('a', take, forward, () => produced)).toBe(true);
    expect(seen).toEqual(['a', 'b']);
    expect(forwardBatch('x', take, forward, () => produced)).toBe(true);
    expect(seen).toEqual(['a', 'b', 'x', 'c', 'd']);
  });

  it('stops at the chunk a watcher refused', () => {
    const seen: unknown[] = [];
    const forward = (chunk: unknown) => chunk !== 'b' && seen.push(chunk) > 0;
    expect(
      forwardBatch(
        'a',
        () => ['b', 'c'],
        forward,
        () => true,
      ),
    ).toBe(false);
    expect(seen).toEqual(['a']);
  });
});
