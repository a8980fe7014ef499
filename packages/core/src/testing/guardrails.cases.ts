import { describe, expect, it } from 'vitest';
import type { NewGuardrail } from '../storage/guardrails.js';
import { newKeyInput } from './fixtures.js';
import { rawOne, sqlText, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const T0 = 1_700_000_000_000;

export function guardrailsCases(ctx: ConformanceContext): void {
  const newAccount = (name = 'guarded') => ctx.storage.createAccount({ name });
  const ruleInput = (accountId: string, overrides: Partial<NewGuardrail> = {}): NewGuardrail => ({
    accountId,
    name: 'no cards',
    stage: 'input',
    category: 'payment_card',
    pattern: null,
    now: T0,
    ...overrides,
  });

  describe('guardrails', () => {
    it('createGuardrail - stores the rule with a grd_ id, createdAt = now and the pattern as given (raw)', async () => {
      const account = await newAccount();
      const rule = await ctx.storage.createGuardrail(
        ruleInput(account.id, { name: 'secrets', stage: 'output', category: 'regex', pattern: '(a+)+$ "q"' }),
      );
      expect(rule).toEqual({
        id: expect.stringMatching(/^grd_/),
        accountId: account.id,
        name: 'secrets',
        stage: 'output',
        category: 'regex',
        pattern: '(a+)+$ "q"',
        createdAt: T0,
      });
      const row = await rawOne(ctx, `SELECT * FROM guardrails WHERE id = ${sqlText(rule.id)}`);
      expect({ ...row, created_at: toNumber(row.created_at) }).toEqual({
        id: rule.id,
        account_id: account.id,
        name: 'secrets',
        stage: 'output',
        category: 'regex',
        pattern: '(a+)+$ "q"',
        created_at: T0,
      });
      const builtIn = await ctx.storage.createGuardrail(ruleInput(account.id));
      expect(builtIn.pattern).toBeNull();
    });

    it('createGuardrail - rejects an unknown account', async () => {
      await expect(ctx.storage.createGuardrail(ruleInput('acct_missing'))).rejects.toThrow();
    });

    it('listGuardrails - oldest first (not by id), only the account’s own', async () => {
      const account = await newAccount();
      const other = await newAccount('other');
      await ctx.storage.createGuardrail(ruleInput(other.id));
      const late = await ctx.storage.createGuardrail(ruleInput(account.id, { name: 'late', now: T0 + 2 }));
      const early = await ctx.storage.createGuardrail(ruleInput(account.id, { name: 'early', now: T0 + 1 }));
      expect(await ctx.storage.listGuardrails(account.id)).toEqual([early, late]);
      expect(await ctx.storage.listGuardrails('acct_missing')).toEqual([]);
    });

    it("deleteGuardrail - deletes once; a second delete, an unknown id and another account's rule answer false", async () => {
      const account = await newAccount();
      const other = await newAccount('other');
      const rule = await ctx.storage.createGuardrail(ruleInput(account.id));
      const theirs = await ctx.storage.createGuardrail(ruleInput(other.id));
      expect(await ctx.storage.deleteGuardrail(account.id, theirs.id)).toBe(false);
      expect(await ctx.storage.deleteGuardrail(account.id, rule.id)).toBe(true);
      expect(await ctx.storage.deleteGuardrail(account.id, rule.id)).toBe(false);
      expect(await ctx.storage.deleteGuardrail(account.id, 'grd_missing')).toBe(false);
      expect(await ctx.storage.listGuardrails(other.id)).toEqual([theirs]);
    });

    it("findApiKeyByHash - counts the account's guardrails (0, 1, 2, and 1 again after a delete), not another's", async () => {
      const account = await newAccount();
      const other = await newAccount('other');
      await ctx.storage.createGuardrail(ruleInput(other.id));
      const { input } = await newKeyInput(account.id);
      await ctx.storage.createApiKey(input);
      const count = async () => (await ctx.storage.findApiKeyByHash(input.hash))?.guardrails;
      expect(await count()).toBe(0);
      const first = await ctx.storage.createGuardrail(ruleInput(account.id));
      expect(await count()).toBe(1);
      await ctx.storage.createGuardrail(ruleInput(account.id, { stage: 'output', category: 'email' }));
      expect(await count()).toBe(2);
      await ctx.storage.deleteGuardrail(account.id, first.id);
      expect(await count()).toBe(1);
    });
  });
}
