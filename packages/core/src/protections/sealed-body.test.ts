import { describe, expect, it } from 'vitest';
import { keyOnly } from './key-only-attack.test-support.js';
import { createBodySealer } from './sealed-body.js';
import { serverSecretBytes } from './server-secret.js';

const secretA = new Uint8Array(32).fill(7);
const secretB = new Uint8Array(32).fill(8);
const sealer = createBodySealer(secretA);

describe('sealed idempotent bodies', () => {
  it('round-trips a body under the same secret, account and key', async () => {
    const sealed = await sealer.seal('acct_1', 'key-123', '{"id":"chatcmpl-1","text":"secret answer"}');
    expect(sealed).not.toContain('secret');
    expect(await sealer.open('acct_1', 'key-123', sealed)).toBe('{"id":"chatcmpl-1","text":"secret answer"}');
  });

  it('cannot be opened with another key or account', async () => {
    const sealed = await sealer.seal('acct_1', 'key-123', 'body');
    await expect(sealer.open('acct_1', 'key-124', sealed)).rejects.toThrow();
    await expect(sealer.open('acct_2', 'key-123', sealed)).rejects.toThrow();
  });

  it('cannot be opened under another server secret, even with the right account and key', async () => {
    const sealed = await sealer.seal('acct_1', 'key-123', 'body');
    await expect(createBodySealer(secretB).open('acct_1', 'key-123', sealed)).rejects.toThrow();
    expect(await createBodySealer(Uint8Array.from(secretA)).open('acct_1', 'key-123', sealed)).toBe('body');
  });

  it('uses a fresh IV each time', async () => {
    expect(await sealer.seal('a', 'k', 'same')).not.toBe(await sealer.seal('a', 'k', 'same'));
  });

  it('stores a lookup id that reveals neither the key nor the account, and differs per account and per secret', async () => {
    const id = await sealer.lookupId('acct_1', 'my-key');
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(id).not.toBe(await sealer.lookupId('acct_2', 'my-key'));
    expect(id).not.toBe(await sealer.lookupId('acct_1', 'my-key2'));
    expect(id).toBe(await sealer.lookupId('acct_1', 'my-key'));
    expect(id).not.toBe(await createBodySealer(secretB).lookupId('acct_1', 'my-key'));
  });

  it('the database row of Idempotency-Key "1" gives nothing away without the secret (no brute force of the lookup id, no opening)', async () => {
    const accountId = 'acct_victim';
    const row = {
      idem_key: await sealer.lookupId(accountId, '1'),
      response_body: await sealer.seal(accountId, '1', '{"content":"the stored completion"}'),
    };

    // Brute force of the lookup id over every short key: without the secret no candidate matches.
    const candidates = Array.from({ length: 1000 }, (_, i) => String(i));
    const found: string[] = [];
    for (const candidate of candidates) {
      if ((await keyOnly.lookupId(accountId, candidate)) === row.idem_key) found.push(candidate);
    }
    expect(found).toEqual([]);
    // Even told the key, opening needs the secret: the key alone and another secret both fail.
    await expect(keyOnly.open(accountId, '1', row.response_body)).rejects.toThrow();
    await expect(createBodySealer(secretB).open(accountId, '1', row.response_body)).rejects.toThrow();
    expect(await sealer.open(accountId, '1', row.response_body)).toBe('{"content":"the stored completion"}');
  });
});

describe('server secret bytes', () => {
  it('takes a string as its UTF-8 bytes and bytes as they are', () => {
    expect(serverSecretBytes('a'.repeat(32))).toEqual(new TextEncoder().encode('a'.repeat(32)));
    expect(serverSecretBytes(secretA)).toEqual(secretA);
  });

  it('refuses a secret shorter than 32 bytes', () => {
    expect(() => serverSecretBytes('short')).toThrow(/at least 32 bytes/);
    expect(() => serverSecretBytes(new Uint8Array(31))).toThrow(/at least 32 bytes/);
  });

  it('without one, makes a random secret once per process', () => {
    const first = serverSecretBytes(undefined);
    expect(first).toHaveLength(32);
    expect(serverSecretBytes(undefined)).toBe(first);
    expect(first.some((byte) => byte !== 0)).toBe(true);
  });
});
