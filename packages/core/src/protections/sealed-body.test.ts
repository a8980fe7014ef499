import { describe, expect, it } from 'vitest';
import { idempotencyLookupId, openBody, sealBody } from './sealed-body.js';

describe('sealed idempotent bodies', () => {
  it('round-trips a body under the same account and key', async () => {
    const sealed = await sealBody('acct_1', 'key-123', '{"id":"chatcmpl-1","text":"secret answer"}');
    expect(sealed).not.toContain('secret');
    expect(await openBody('acct_1', 'key-123', sealed)).toBe('{"id":"chatcmpl-1","text":"secret answer"}');
  });

  it('cannot be opened with another key or account', async () => {
    const sealed = await sealBody('acct_1', 'key-123', 'body');
    await expect(openBody('acct_1', 'key-124', sealed)).rejects.toThrow();
    await expect(openBody('acct_2', 'key-123', sealed)).rejects.toThrow();
  });

  it('uses a fresh IV each time', async () => {
    expect(await sealBody('a', 'k', 'same')).not.toBe(await sealBody('a', 'k', 'same'));
  });

  it('stores a lookup id that reveals neither the key nor the account, and differs per account', async () => {
    const id = await idempotencyLookupId('acct_1', 'my-key');
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(id).not.toBe(await idempotencyLookupId('acct_2', 'my-key'));
    expect(id).toBe(await idempotencyLookupId('acct_1', 'my-key'));
  });
});
