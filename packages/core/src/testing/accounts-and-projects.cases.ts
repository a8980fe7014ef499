import { describe, expect, it } from 'vitest';
import { expectRecentEpochMs, ID_PATTERN } from './fixtures.js';
import { rawCount, rawOne, sqlText, toBoolean, toNumber, toNumberOrNull } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

/** Five trillion micros (5M USD) does not fit an int4 column: catches a too-narrow type or a string. */
const BIG_LIMIT = 5_000_000_000_000;

export function accountsAndProjectsCases(ctx: ConformanceContext): void {
  describe('accounts', () => {
    it('createAccount - starts at a zero balance, not suspended, with an acct_ id and number fields', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });

      expect(account).toEqual({
        id: expect.stringMatching(ID_PATTERN.account),
        name: 'Acme',
        balanceMicros: 0,
        monthlyLimitMicros: null,
        defaultRpm: null,
        suspended: false,
        createdAt: expect.any(Number),
      });
      expect(expectRecentEpochMs(account.createdAt)).toBe(true);

      const row = await rawOne(ctx, `SELECT * FROM accounts WHERE id = ${sqlText(account.id)}`);
      expect(row.name).toBe('Acme');
      expect(toNumber(row.balance_micros)).toBe(0);
      expect(toBoolean(row.suspended)).toBe(false);
      expect(row.monthly_limit_micros).toBeNull();
      expect(row.default_rpm).toBeNull();
    });

    it('createAccount - gives every account its own id', async () => {
      const a = await ctx.storage.createAccount({ name: 'a' });
      const b = await ctx.storage.createAccount({ name: 'b' });
      expect(a.id).not.toBe(b.id);
    });

    it('getAccount - returns the account as created', async () => {
      const created = await ctx.storage.createAccount({ name: 'Acme' });
      expect(await ctx.storage.getAccount(created.id)).toEqual(created);
    });

    it('getAccount - returns null for an unknown id', async () => {
      await ctx.storage.createAccount({ name: 'Acme' });
      expect(await ctx.storage.getAccount('acct_doesnotexist')).toBeNull();
    });

    it('countAccounts - counts from 0 on an empty store, as a number', async () => {
      expect(await ctx.storage.countAccounts()).toBe(0);
      for (const name of ['a', 'b', 'c']) await ctx.storage.createAccount({ name });
      expect(await ctx.storage.countAccounts()).toBe(3);
      expect(await rawCount(ctx, 'accounts')).toBe(3);
    });

    it('listAccounts - every account as getAccount reads it, oldest first; [] on an empty store', async () => {
      expect(await ctx.storage.listAccounts()).toEqual([]);
      // A tick apart, so creation order is created_at order.
      const tick = () => new Promise((resolve) => setTimeout(resolve, 3));
      const plain = await ctx.storage.createAccount({ name: 'plain' });
      await tick();
      const limited = await ctx.storage.createAccount({ name: 'limited', monthlyLimitMicros: BIG_LIMIT });
      await tick();
      const suspended = await ctx.storage.createAccount({ name: 'suspended', defaultRpm: 5 });
      await ctx.storage.setAccountSuspended(suspended.id, true);
      await ctx.storage.appendLedgerEntries(plain.id, [
        { kind: 'credit', amountMicros: 7, description: 'x' },
      ]);

      const expected = await Promise.all(
        [plain, limited, suspended].map((a) => ctx.storage.getAccount(a.id)),
      );
      expect(await ctx.storage.listAccounts()).toEqual(expected);
      expect(expected.map((a) => [a?.balanceMicros, a?.suspended])).toEqual([
        [7, false],
        [0, false],
        [0, true],
      ]);
    });

    it('createAccount - round-trips monthlyLimitMicros and defaultRpm (large values stay numbers)', async () => {
      const created = await ctx.storage.createAccount({
        name: 'limited',
        monthlyLimitMicros: BIG_LIMIT,
        defaultRpm: 120,
      });
      expect(created.monthlyLimitMicros).toBe(BIG_LIMIT);
      expect(created.defaultRpm).toBe(120);

      const read = await ctx.storage.getAccount(created.id);
      expect(read?.monthlyLimitMicros).toBe(BIG_LIMIT);
      expect(read?.defaultRpm).toBe(120);

      const row = await rawOne(ctx, `SELECT * FROM accounts WHERE id = ${sqlText(created.id)}`);
      expect(toNumber(row.monthly_limit_micros)).toBe(BIG_LIMIT);
      expect(toNumber(row.default_rpm)).toBe(120);
    });

    it('createAccount - stores an explicit null limit and rpm as null', async () => {
      const created = await ctx.storage.createAccount({
        name: 'open',
        monthlyLimitMicros: null,
        defaultRpm: null,
      });
      expect(created.monthlyLimitMicros).toBeNull();
      expect(created.defaultRpm).toBeNull();
      const read = await ctx.storage.getAccount(created.id);
      expect(read?.monthlyLimitMicros).toBeNull();
      expect(read?.defaultRpm).toBeNull();
      const row = await rawOne(ctx, `SELECT * FROM accounts WHERE id = ${sqlText(created.id)}`);
      expect(toNumberOrNull(row.monthly_limit_micros)).toBeNull();
      expect(toNumberOrNull(row.default_rpm)).toBeNull();
    });

    it('setAccountSuspended - suspends and unsuspends, changing nothing else', async () => {
      const created = await ctx.storage.createAccount({ name: 'Acme', monthlyLimitMicros: 9_000_000 });
      const rawSuspended = async () =>
        toBoolean(
          (await rawOne(ctx, `SELECT suspended FROM accounts WHERE id = ${sqlText(created.id)}`)).suspended,
        );

      const suspended = await ctx.storage.setAccountSuspended(created.id, true);
      expect(suspended).toEqual({ ...created, suspended: true });
      expect(await ctx.storage.getAccount(created.id)).toEqual({ ...created, suspended: true });
      expect(await rawSuspended()).toBe(true);

      const restored = await ctx.storage.setAccountSuspended(created.id, false);
      expect(restored).toEqual(created);
      expect(await ctx.storage.getAccount(created.id)).toEqual(created);
      expect(await rawSuspended()).toBe(false);
    });

    it('setAccountSuspended - only touches the named account', async () => {
      const target = await ctx.storage.createAccount({ name: 'target' });
      const bystander = await ctx.storage.createAccount({ name: 'bystander' });
      await ctx.storage.setAccountSuspended(target.id, true);
      expect(await ctx.storage.getAccount(bystander.id)).toEqual(bystander);
    });

    it('setAccountSuspended - returns null for an unknown id and creates nothing', async () => {
      expect(await ctx.storage.setAccountSuspended('acct_doesnotexist', true)).toBeNull();
      expect(await rawCount(ctx, 'accounts')).toBe(0);
    });
  });

  describe('projects', () => {
    it('createProject - creates a proj_ project that getProject returns', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const project = await ctx.storage.createProject({ accountId: account.id, name: 'web' });

      expect(project).toEqual({
        id: expect.stringMatching(ID_PATTERN.project),
        accountId: account.id,
        name: 'web',
        createdAt: expect.any(Number),
      });
      expect(expectRecentEpochMs(project.createdAt)).toBe(true);
      expect(await ctx.storage.getProject(account.id, project.id)).toEqual(project);

      const row = await rawOne(ctx, `SELECT * FROM projects WHERE id = ${sqlText(project.id)}`);
      expect(row.account_id).toBe(account.id);
      expect(row.name).toBe('web');
    });

    it("getProject - returns null for another account's project", async () => {
      const owner = await ctx.storage.createAccount({ name: 'owner' });
      const other = await ctx.storage.createAccount({ name: 'other' });
      const project = await ctx.storage.createProject({ accountId: owner.id, name: 'web' });
      expect(await ctx.storage.getProject(other.id, project.id)).toBeNull();
    });

    it('getProject - returns null for an unknown project id', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      expect(await ctx.storage.getProject(account.id, 'proj_doesnotexist')).toBeNull();
    });

    it('createProject - rejects for a missing account and writes nothing', async () => {
      await expect(
        ctx.storage.createProject({ accountId: 'acct_doesnotexist', name: 'web' }),
      ).rejects.toThrow();
      expect(await rawCount(ctx, 'projects')).toBe(0);
    });
  });
}
