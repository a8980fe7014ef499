import { describe, expect, it } from 'vitest';
import { MB, tooLarge } from './size-caps.js';

describe('tooLarge', () => {
  it('states both figures in MB as product.md words it', () => {
    const error = tooLarge('Request body', Math.round(12.4 * MB), 10 * MB);
    expect(error.status).toBe(413);
    expect(error.code).toBe('payload_too_large');
    expect(error.message).toBe('Request body is 12.4 MB; the limit is 10 MB.');
  });

  it('says "over" for a streamed body cut off at the cap', () => {
    expect(tooLarge('Request body', 10 * MB + 512, 10 * MB, { atLeast: true }).message).toBe(
      'Request body is over 10.0005 MB; the limit is 10 MB.',
    );
  });

  it('says "are" for headers, and one figure twice when only the cap is known', () => {
    expect(tooLarge('Request headers', 16_384, 16_384, { atLeast: true }).message).toBe(
      'Request headers are over 0.0156 MB; the limit is 0.0156 MB.',
    );
  });

  it('adds digits until the two figures differ, and never rounds a small cap to 0', () => {
    expect(tooLarge('Attachment', 5 * MB + 1, 5 * MB).message).toBe(
      'Attachment is 5.000001 MB; the limit is 5 MB.',
    );
    expect(tooLarge('Request body', 4096, 1024).message).toBe(
      'Request body is 0.00391 MB; the limit is 0.000977 MB.',
    );
  });
});
