import { describe, expect, it, vi } from 'vitest';
import { type AuthChange, afterAuthChanges } from './auth-changes.js';

describe('afterAuthChanges', () => {
  const base = {
    updateApiKey: vi.fn(async (accountId: string, keyId: string) => ({ accountId, keyId })),
    createGuardrail: vi.fn(async (input: { accountId: string }) => input),
    setAccountSuspended: vi.fn(async (_id: string) => {
      throw new Error('no such account');
    }),
    listApiKeys: vi.fn(async (accountId: string) => [accountId]),
    redeemOAuthCode: vi.fn(async () => 'redeemed'),
  };

  it('reports the account of each auth-changing operation after it resolved, before its result returns', async () => {
    const changes: AuthChange[] = [];
    const storage = afterAuthChanges(base, (change) => {
      changes.push(change);
    });
    expect(await storage.updateApiKey('acct_a', 'key_1')).toEqual({ accountId: 'acct_a', keyId: 'key_1' });
    expect(await storage.createGuardrail({ accountId: 'acct_b' })).toEqual({ accountId: 'acct_b' });
    expect(await storage.redeemOAuthCode()).toBe('redeemed');
    expect(changes).toEqual(['acct_a', 'acct_b', null]);
  });

  it('reports nothing for a failed change or for any other operation', async () => {
    const onChange = vi.fn();
    const storage = afterAuthChanges(base, onChange);
    await expect(storage.setAccountSuspended('acct_x')).rejects.toThrow('no such account');
    expect(await storage.listApiKeys('acct_a')).toEqual(['acct_a']);
    expect(onChange).not.toHaveBeenCalled();
  });
});
