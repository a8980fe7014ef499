import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.js';
import type { ApiKey, KeyAndAccount, Storage } from '../storage/types.js';
import { hashApiKey } from './api-key.js';
import { AuthCache } from './auth-cache.js';
import { authenticate, authenticateKeyId } from './authenticate.js';

const T = 1_700_000_000_000;
const TOKEN = `gw_live_${'x'.repeat(32)}`;

function found(key: Partial<ApiKey>): KeyAndAccount {
  return {
    key: {
      id: 'key_1',
      accountId: 'acct_1',
      disabled: false,
      revoked: false,
      expiresAt: null,
      ...key,
    } as ApiKey,
    account: { id: 'acct_1', suspended: false } as KeyAndAccount['account'],
    byokKeys: 0,
    guardrails: 0,
  };
}

const storageWith = (result: KeyAndAccount) =>
  ({ findApiKeyByHash: async () => result, findApiKeyById: async () => result }) as unknown as Storage;
const request = () =>
  new Request('http://gateway.test/v1/key', { headers: { authorization: `Bearer ${TOKEN}` } });

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string } | null> {
  try {
    await promise;
    return null;
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { code: error.code, message: error.message };
  }
}

describe('authenticate', () => {
  it('a key that expires works until its expiresAt, and from then on answers 401 key_revoked', async () => {
    const storage = storageWith(found({ expiresAt: T }));

    expect((await authenticate(request(), storage, { now: T - 1 })).key.id).toBe('key_1');
    for (const now of [T, T + 60_000]) {
      expect(await refusal(authenticate(request(), storage, { now }))).toEqual({
        code: 'key_revoked',
        message: `This API key expired at ${new Date(T).toISOString()}.`,
      });
      expect((await refusal(authenticateKeyId(storage, 'acct_1', 'key_1', now)))?.code).toBe('key_revoked');
    }
  });

  it('a cached authentication is checked against the expiry too', async () => {
    const cache = new AuthCache(60_000);
    cache.setListening(true);
    cache.set(await hashApiKey(TOKEN), found({ expiresAt: T }), cache.mark());
    const storage = storageWith(found({}));

    expect((await authenticate(request(), storage, { now: T - 1, cache })).key.expiresAt).toBe(T);
    expect((await refusal(authenticate(request(), storage, { now: T, cache })))?.code).toBe('key_revoked');
  });

  it('a revoked key and a paused one are both 401 key_revoked, each saying which', async () => {
    expect(
      await refusal(
        authenticate(request(), storageWith(found({ disabled: true, revoked: true })), { now: T }),
      ),
    ).toEqual({ code: 'key_revoked', message: 'This API key has been revoked.' });
    expect(
      await refusal(authenticate(request(), storageWith(found({ disabled: true })), { now: T })),
    ).toEqual({
      code: 'key_revoked',
      message: 'This API key is disabled.',
    });
  });
});
