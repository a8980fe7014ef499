import { describe, expect, it, vi } from 'vitest';
import type { AuthChange } from '../storage/auth-changes.js';
import type { KeyAndAccount } from '../storage/types.js';
import { AuthCache, cacheAuthentications } from './auth-cache.js';

const found = (accountId: string, keyId = 'key_1'): KeyAndAccount =>
  ({
    key: { id: keyId, accountId },
    account: { id: accountId },
    byokKeys: 0,
    guardrails: 0,
  }) as KeyAndAccount;

const logger = { debug() {}, info() {}, warn() {}, error: vi.fn() };

describe('AuthCache', () => {
  it('keeps nothing until it hears changes, and forgets everything when it stops', () => {
    const cache = new AuthCache();
    cache.set('h1', found('acct_a'), cache.mark());
    expect(cache.get('h1')).toBeUndefined();
    cache.setListening(true);
    cache.set('h1', found('acct_a'), cache.mark());
    expect(cache.get('h1')?.account.id).toBe('acct_a');
    cache.setListening(false);
    expect(cache.get('h1')).toBeUndefined();
    cache.setListening(true);
    expect(cache.get('h1')).toBeUndefined();
  });

  it("forgets one account's keys on its change, every key on a change of any account", () => {
    const cache = new AuthCache();
    cache.setListening(true);
    cache.set('a1', found('acct_a', 'key_a1'), cache.mark());
    cache.set('a2', found('acct_a', 'key_a2'), cache.mark());
    cache.set('b1', found('acct_b', 'key_b1'), cache.mark());
    cache.forget('acct_a');
    expect([cache.get('a1'), cache.get('a2'), cache.get('b1')?.key.id]).toEqual([
      undefined,
      undefined,
      'key_b1',
    ]);
    cache.forget(null);
    expect(cache.get('b1')).toBeUndefined();
  });

  it('does not keep what a read found when a change was heard while it ran', () => {
    const cache = new AuthCache();
    cache.setListening(true);
    const mark = cache.mark();
    cache.forget('acct_other');
    cache.set('h1', found('acct_a'), mark);
    expect(cache.get('h1')).toBeUndefined();
  });

  it('lets an entry live at most its TTL', async () => {
    const cache = new AuthCache(20);
    cache.setListening(true);
    cache.set('h1', found('acct_a'), cache.mark());
    expect(cache.get('h1')).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(cache.get('h1')).toBeUndefined();
  });
});

describe('cacheAuthentications', () => {
  it('is off for a storage without a change feed, and with a TTL of 0', () => {
    expect(cacheAuthentications({}, undefined, logger).cache).toBeNull();
    const feed = { subscribeAuthChanges: vi.fn() };
    expect(cacheAuthentications(feed, 0, logger).cache).toBeNull();
    expect(feed.subscribeAuthChanges).not.toHaveBeenCalled();
  });

  it('caches once subscribed, forgets what the feed reports, and unsubscribes on close', async () => {
    let report: (change: AuthChange) => void = () => {};
    const unsubscribe = vi.fn(async () => {});
    const storage = {
      subscribeAuthChanges: async (listener: (change: AuthChange) => void) => {
        report = listener;
        return unsubscribe;
      },
    };
    const { cache, close } = cacheAuthentications(storage, 1_000, logger);
    await Promise.resolve();
    await Promise.resolve();
    cache!.set('h1', found('acct_a'), cache!.mark());
    expect(cache!.get('h1')).toBeDefined();
    report('acct_a');
    expect(cache!.get('h1')).toBeUndefined();
    await close();
    expect(unsubscribe).toHaveBeenCalledOnce();
  });

  it('logs and caches nothing when it cannot subscribe', async () => {
    const storage = { subscribeAuthChanges: async () => Promise.reject(new Error('no LISTEN')) };
    const { cache, close } = cacheAuthentications(storage, 1_000, logger);
    await close();
    cache!.set('h1', found('acct_a'), cache!.mark());
    expect(cache!.get('h1')).toBeUndefined();
    expect(logger.error).toHaveBeenCalled();
  });
});
