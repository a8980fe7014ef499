import { type Account, type NewAccount, newId, type Project } from '@tollgate/core';
import type { Kysely } from 'kysely';
import type { Database } from './database.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { mapAccount, mapProject, toInteger } from './row-mappers.js';

/** `Storage.createAccount`: zero balance, not suspended. */
export async function createAccount(ctx: QueryContext, input: NewAccount): Promise<Account> {
  assertInteger('monthlyLimitMicros', input.monthlyLimitMicros, { nullable: true });
  assertInteger('defaultRpm', input.defaultRpm, { nullable: true });
  const row = await write(ctx, (trx) =>
    trx
      .insertInto('accounts')
      .values({
        id: newId('acct'),
        name: input.name,
        balance_micros: 0,
        monthly_limit_micros: input.monthlyLimitMicros ?? null,
        default_rpm: input.defaultRpm ?? null,
        suspended: ctx.dialect.bool(false),
        created_at: ctx.now(),
      })
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
  return mapAccount(row);
}

/** `Storage.getAccount`. */
export async function getAccount(ctx: QueryContext, id: string): Promise<Account | null> {
  const row = await ctx.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? mapAccount(row) : null;
}

/** `Storage.countAccounts`. */
export async function countAccounts(ctx: QueryContext): Promise<number> {
  const row = await ctx.db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll().as('count'))
    .executeTakeFirstOrThrow();
  return toInteger(row.count);
}

/** `Storage.listAccounts`: oldest first, ties by id. */
export async function listAccounts(ctx: QueryContext): Promise<Account[]> {
  const rows = await ctx.db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(mapAccount);
}

/** `Storage.setAccountSuspended`: one UPDATE … RETURNING. */
export async function setAccountSuspended(
  ctx: QueryContext,
  id: string,
  suspended: boolean,
): Promise<Account | null> {
  const row = await write(ctx, (trx) =>
    trx
      .updateTable('accounts')
      .set({ suspended: ctx.dialect.bool(suspended) })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst(),
  );
  return row ? mapAccount(row) : null;
}

/** Whether the account exists (read in the caller's transaction, when given one). */
export async function accountExists(db: Kysely<Database>, accountId: string): Promise<boolean> {
  const row = await db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  return row !== undefined;
}

/** Throws `account … does not exist` unless it does: the clear error before a write that needs it. */
export async function requireAccount(db: Kysely<Database>, accountId: string): Promise<void> {
  if (!(await accountExists(db, accountId))) throw new Error(`account ${accountId} does not exist`);
}

/** `Storage.createProject`: the account is checked in the insert's transaction for a clear error. */
export async function createProject(
  ctx: QueryContext,
  input: { accountId: string; name: string },
): Promise<Project> {
  const row = await write(ctx, async (trx) => {
    await requireAccount(trx, input.accountId);
    return trx
      .insertInto('projects')
      .values({ id: newId('proj'), account_id: input.accountId, name: input.name, created_at: ctx.now() })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return mapProject(row);
}

/** `Storage.getProject`: scoped to the account. */
export async function getProject(
  ctx: QueryContext,
  accountId: string,
  projectId: string,
): Promise<Project | null> {
  const row = await ctx.db
    .selectFrom('projects')
    .selectAll()
    .where('id', '=', projectId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? mapProject(row) : null;
}
