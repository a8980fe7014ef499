import {
  type ApiKey,
  type ApiKeyPatch,
  type KeyAndAccount,
  LIMIT_RESETS,
  type LimitReset,
  type NewApiKey,
  newId,
} from '@tollgate/core';
import { type Kysely, sql, type Updateable } from 'kysely';
import { requireAccount } from './account-queries.js';
import type { ApiKeysTable, Database, DbBoolean } from './database.js';
import { prepareQuery } from './prepared-query.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { mapAccount, mapApiKey, toInteger } from './row-mappers.js';

/**
 * `Storage.createApiKey`. The account, the project and the hash are checked inside the insert's
 * transaction so the caller gets a clear error; the schema enforces the same three rules (foreign
 * keys, including (project_id, account_id) → projects, and a unique hash) against any race.
 */
export async function createApiKey(ctx: QueryContext, input: NewApiKey): Promise<ApiKey> {
  assertInteger('spendLimitMicros', input.spendLimitMicros, { nullable: true });
  assertInteger('rateLimitRpm', input.rateLimitRpm, { nullable: true });
  assertLimitReset(input.limitReset);
  const projectId = input.projectId ?? null;
  const row = await write(ctx, async (trx) => {
    await requireAccount(trx, input.accountId);
    if (projectId !== null) {
      const project = await trx
        .selectFrom('projects')
        .select('id')
        .where('id', '=', projectId)
        .where('account_id', '=', input.accountId)
        .executeTakeFirst();
      if (!project) throw new Error(`project ${projectId} is not a project of account ${input.accountId}`);
    }
    const taken = await trx
      .selectFrom('api_keys')
      .select('id')
      .where('key_hash', '=', input.hash)
      .executeTakeFirst();
    if (taken) throw new Error('an API key with this hash already exists');
    return trx
      .insertInto('api_keys')
      .values({
        id: newId('key'),
        account_id: input.accountId,
        project_id: projectId,
        name: input.name,
        scope: input.scope,
        env: input.env,
        key_hash: input.hash,
        prefix: input.prefix,
        spend_limit_micros: input.spendLimitMicros ?? null,
        limit_reset: input.limitReset ?? null,
        rate_limit_rpm: input.rateLimitRpm ?? null,
        spent_micros: 0,
        disabled: ctx.dialect.bool(false),
        created_at: ctx.now(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return mapApiKey(row);
}

/**
 * `Storage.findApiKeyByHash`: the key, its account and the account's counts of BYOK keys and
 * guardrails in one joined read with correlated subqueries (the hot auth path: one round trip, whatever the account).
 */
export async function findApiKeyByHash(ctx: QueryContext, hash: string): Promise<KeyAndAccount | null> {
  return keyAndAccountOf(await keyAndAccountByHash.first(ctx, { hash }));
}

/** `Storage.findApiKeyById`: the same read, by the key's id within its account. */
export async function findApiKeyById(
  ctx: QueryContext,
  accountId: string,
  keyId: string,
): Promise<KeyAndAccount | null> {
  return keyAndAccountOf(await keyAndAccountById.first(ctx, { accountId, keyId }));
}

type KeyAndAccountRow = NonNullable<Awaited<ReturnType<typeof keyAndAccountByHash.first>>>;

function keyAndAccountOf(row: KeyAndAccountRow | undefined | null): KeyAndAccount | null {
  if (!row) return null;
  const account = mapAccount({
    id: row.account_id,
    name: row.account_name,
    balance_micros: row.account_balance_micros,
    monthly_limit_micros: row.account_monthly_limit_micros,
    default_rpm: row.account_default_rpm,
    suspended: row.account_suspended,
    created_at: row.account_created_at,
  });
  return {
    key: mapApiKey(row),
    account,
    byokKeys: toInteger(row.account_byok_keys),
    guardrails: toInteger(row.account_guardrails),
  };
}

/** A key joined to its account, with the account's BYOK keys and guardrails counted. */
const keyAndAccount = (db: Kysely<Database>) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('accounts as a', 'a.id', 'k.account_id')
    .selectAll('k')
    .select((eb) => [
      'a.name as account_name',
      'a.balance_micros as account_balance_micros',
      'a.monthly_limit_micros as account_monthly_limit_micros',
      'a.default_rpm as account_default_rpm',
      'a.suspended as account_suspended',
      'a.created_at as account_created_at',
      eb
        .selectFrom('byok_keys as b')
        .select((sub) => sub.fn.countAll().as('n'))
        .whereRef('b.account_id', '=', 'a.id')
        .as('account_byok_keys'),
      eb
        .selectFrom('guardrails as g')
        .select((sub) => sub.fn.countAll().as('n'))
        .whereRef('g.account_id', '=', 'a.id')
        .as('account_guardrails'),
    ]);

const keyAndAccountByHash = prepareQuery((db, p: { hash: string }) =>
  keyAndAccount(db).where('k.key_hash', '=', p.hash),
);

const keyAndAccountById = prepareQuery((db, p: { accountId: string; keyId: string }) =>
  keyAndAccount(db).where('k.id', '=', p.keyId).where('k.account_id', '=', p.accountId),
);

/** `Storage.listApiKeys`: oldest first, disabled keys included. */
export async function listApiKeys(ctx: QueryContext, accountId: string): Promise<ApiKey[]> {
  const rows = await ctx.db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy(sql.ref(ctx.dialect.insertionOrderColumn))
    .execute();
  return rows.map(mapApiKey);
}

/** `Storage.getApiKey`: scoped to the account. */
export async function getApiKey(ctx: QueryContext, accountId: string, keyId: string): Promise<ApiKey | null> {
  const row = await ctx.db
    .selectFrom('api_keys')
    .selectAll()
    .where('id', '=', keyId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? mapApiKey(row) : null;
}

/** `Storage.getApiKeyById`: by id alone, whatever the account. */
export async function getApiKeyById(ctx: QueryContext, keyId: string): Promise<ApiKey | null> {
  const row = await ctx.db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
  return row ? mapApiKey(row) : null;
}

/**
 * `Storage.updateApiKey`: one UPDATE … RETURNING scoped to the account. Enabling sets `disabled`
 * to the row's own `revoked`, so a revoked key stays disabled whatever raced with the patch.
 */
export async function updateApiKey(
  ctx: QueryContext,
  accountId: string,
  keyId: string,
  patch: ApiKeyPatch,
): Promise<ApiKey | null> {
  assertInteger('spendLimitMicros', patch.spendLimitMicros, { nullable: true });
  assertInteger('rateLimitRpm', patch.rateLimitRpm, { nullable: true });
  assertLimitReset(patch.limitReset);
  const changes: Updateable<ApiKeysTable> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.spendLimitMicros !== undefined) changes.spend_limit_micros = patch.spendLimitMicros;
  if (patch.rateLimitRpm !== undefined) changes.rate_limit_rpm = patch.rateLimitRpm;
  if (patch.limitReset !== undefined) changes.limit_reset = patch.limitReset;
  if (patch.disabled === true) changes.disabled = ctx.dialect.bool(true);
  const enable = patch.disabled === false;
  if (Object.keys(changes).length === 0 && !enable) return getApiKey(ctx, accountId, keyId);
  const row = await write(ctx, (trx) =>
    trx
      .updateTable('api_keys')
      .set(changes)
      .$if(enable, (qb) => qb.set({ disabled: sql<DbBoolean>`revoked` }))
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .returningAll()
      .executeTakeFirst(),
  );
  return row ? mapApiKey(row) : null;
}

/** `Storage.revokeApiKey`: one UPDATE … RETURNING scoped to the account; the row stays. */
export async function revokeApiKey(
  ctx: QueryContext,
  accountId: string,
  keyId: string,
): Promise<ApiKey | null> {
  const yes = ctx.dialect.bool(true);
  const row = await write(ctx, (trx) =>
    trx
      .updateTable('api_keys')
      .set({ revoked: yes, disabled: yes })
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .returningAll()
      .executeTakeFirst(),
  );
  return row ? mapApiKey(row) : null;
}

/** Throws on a `limitReset` that is none of the windows (the schema's check refuses it too). */
function assertLimitReset(value: LimitReset | null | undefined): void {
  if (value === undefined || value === null) return;
  if (!(LIMIT_RESETS as readonly unknown[]).includes(value)) {
    throw new RangeError(
      `limitReset must be one of ${LIMIT_RESETS.join(', ')} or null, got ${String(value)}`,
    );
  }
}
