import {
  type ClientCredentialsIssue,
  type EpochMs,
  type NewOAuthClient,
  type NewOAuthCode,
  newId,
  type OAuthClient,
  type OAuthCode,
  type OAuthMintedKey,
  type OAuthRedemption,
} from '@tollgate/core';
import type { Selectable } from 'kysely';
import { requireAccount } from './account-queries.js';
import type { OAuthClientsTable, OAuthCodesTable } from './database.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { toInteger, toNullableInteger } from './row-mappers.js';

/**
 * `Storage.createOAuthClient`: the account is checked inside the insert's transaction for a clear
 * error; the schema enforces it too (foreign key), and the primary key refuses a taken id.
 */
export async function createOAuthClient(ctx: QueryContext, input: NewOAuthClient): Promise<OAuthClient> {
  assertInteger('createdAt', input.createdAt);
  const row = await write(ctx, async (trx) => {
    await requireAccount(trx, input.accountId);
    return trx
      .insertInto('oauth_clients')
      .values({
        id: input.id,
        account_id: input.accountId,
        name: input.name,
        redirect_uris: JSON.stringify(input.redirectUris),
        secret_hash: input.secretHash,
        created_at: input.createdAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return mapOAuthClient(row);
}

/** `Storage.listOAuthClients`: oldest first, clients created in the same millisecond by id. */
export async function listOAuthClients(ctx: QueryContext, accountId: string): Promise<OAuthClient[]> {
  const rows = await ctx.db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(mapOAuthClient);
}

/** `Storage.getOAuthClient`: by id alone, whatever the account. */
export async function getOAuthClient(ctx: QueryContext, clientId: string): Promise<OAuthClient | null> {
  const row = await ctx.db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('id', '=', clientId)
    .executeTakeFirst();
  return row ? mapOAuthClient(row) : null;
}

/**
 * `Storage.deleteOAuthClient`, in one transaction: the client's row is locked first (Postgres), so a
 * concurrent `issueClientCredentialsKey` either committed its key before or finds no client after;
 * then its codes go (they refer to it, and a redemption racing them holds the code's row until it
 * commits), then every key minted for it is revoked (read after both, so it sees their keys), then
 * the client. Nothing changes unless the client is the account's.
 */
export async function deleteOAuthClient(
  ctx: QueryContext,
  accountId: string,
  clientId: string,
): Promise<boolean> {
  return write(ctx, async (trx) => {
    const client = await trx
      .selectFrom('oauth_clients')
      .select('id')
      .where('id', '=', clientId)
      .where('account_id', '=', accountId)
      .$if(ctx.dialect.selectForUpdate, (qb) => qb.forUpdate())
      .executeTakeFirst();
    if (!client) return false;
    await trx.deleteFrom('oauth_codes').where('client_id', '=', clientId).execute();
    const yes = ctx.dialect.bool(true);
    await trx
      .updateTable('api_keys')
      .set({ revoked: yes, disabled: yes })
      .where('oauth_client_id', '=', clientId)
      .execute();
    const result = await trx
      .deleteFrom('oauth_clients')
      .where('id', '=', clientId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}

/** `Storage.createOAuthCode`: foreign keys refuse an unknown client or account, the primary key a taken hash. */
export async function createOAuthCode(ctx: QueryContext, input: NewOAuthCode): Promise<void> {
  assertInteger('createdAt', input.createdAt);
  assertInteger('expiresAt', input.expiresAt);
  assertInteger('spendLimitMicros', input.spendLimitMicros, { nullable: true });
  await write(ctx, async (trx) => {
    await requireAccount(trx, input.accountId);
    await trx
      .insertInto('oauth_codes')
      .values({
        code_hash: input.codeHash,
        client_id: input.clientId,
        account_id: input.accountId,
        redirect_uri: input.redirectUri,
        code_challenge: input.codeChallenge,
        spend_limit_micros: input.spendLimitMicros,
        created_at: input.createdAt,
        expires_at: input.expiresAt,
        used_at: null,
        key_id: null,
      })
      .execute();
  });
}

/** `Storage.getOAuthCode`: by hash alone. */
export async function getOAuthCode(ctx: QueryContext, codeHash: string): Promise<OAuthCode | null> {
  const row = await ctx.db
    .selectFrom('oauth_codes')
    .selectAll()
    .where('code_hash', '=', codeHash)
    .executeTakeFirst();
  return row ? mapOAuthCode(row) : null;
}

/**
 * `Storage.redeemOAuthCode`, in one write transaction. The claim is a conditional
 * `UPDATE … WHERE used_at IS NULL AND expires_at > now RETURNING`: on Postgres a concurrent
 * redemption of the same code waits on the row lock the winner's UPDATE holds, then re-reads the
 * row, finds it used and updates nothing; on SQLite the write lock (`BEGIN IMMEDIATE`) already
 * serialises them. A loser reads the row as the winner committed it (used, with its key) and
 * revokes that key.
 */
export async function redeemOAuthCode(
  ctx: QueryContext,
  input: { codeHash: string; now: EpochMs; key: OAuthMintedKey },
): Promise<OAuthRedemption> {
  assertInteger('now', input.now);
  return write(ctx, async (trx): Promise<OAuthRedemption> => {
    const claimed = await trx
      .updateTable('oauth_codes')
      .set({ used_at: input.now })
      .where('code_hash', '=', input.codeHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', input.now)
      .returning(['account_id', 'client_id', 'spend_limit_micros'])
      .executeTakeFirst();
    if (claimed) {
      const keyId = newId('key');
      await trx
        .insertInto('api_keys')
        .values({
          id: keyId,
          account_id: claimed.account_id,
          project_id: null,
          name: input.key.name,
          scope: 'inference',
          env: input.key.env,
          key_hash: input.key.hash,
          prefix: input.key.prefix,
          spend_limit_micros: toNullableInteger(claimed.spend_limit_micros),
          rate_limit_rpm: null,
          spent_micros: 0,
          disabled: ctx.dialect.bool(false),
          oauth_client_id: claimed.client_id,
          created_at: ctx.now(),
        })
        .execute();
      await trx
        .updateTable('oauth_codes')
        .set({ key_id: keyId })
        .where('code_hash', '=', input.codeHash)
        .execute();
      return { outcome: 'redeemed', keyId };
    }
    const row = await trx
      .selectFrom('oauth_codes')
      .select(['used_at', 'key_id', 'account_id'])
      .where('code_hash', '=', input.codeHash)
      .executeTakeFirst();
    if (!row) return { outcome: 'unknown' };
    if (row.used_at === null) return { outcome: 'expired' };
    if (row.key_id !== null) {
      const yes = ctx.dialect.bool(true);
      await trx
        .updateTable('api_keys')
        .set({ revoked: yes, disabled: yes })
        .where('id', '=', row.key_id)
        .where('account_id', '=', row.account_id)
        .execute();
    }
    return { outcome: 'replayed', revokedKeyId: row.key_id };
  });
}

/**
 * `Storage.issueClientCredentialsKey`, in one write transaction that first locks the client's row
 * (Postgres; SQLite's write lock already serialises it), so concurrent grants of one client and its
 * deletion take turns: the first grant mints, the next ones find its key. Only client-credentials
 * keys expire, so `expires_at > validAt` picks among them alone (on the partial index of client
 * keys).
 */
export async function issueClientCredentialsKey(
  ctx: QueryContext,
  input: { clientId: string; validAt: EpochMs; expiresAt: EpochMs; key: OAuthMintedKey },
): Promise<ClientCredentialsIssue> {
  assertInteger('validAt', input.validAt);
  assertInteger('expiresAt', input.expiresAt);
  return write(ctx, async (trx): Promise<ClientCredentialsIssue> => {
    const client = await trx
      .selectFrom('oauth_clients')
      .select(['id', 'account_id'])
      .where('id', '=', input.clientId)
      .$if(ctx.dialect.selectForUpdate, (qb) => qb.forUpdate())
      .executeTakeFirst();
    if (!client) return { outcome: 'unknown_client' };
    const live = await trx
      .selectFrom('api_keys')
      .select(['id', 'expires_at'])
      .where('oauth_client_id', '=', client.id)
      .where('expires_at', '>', input.validAt)
      .where('disabled', '=', ctx.dialect.bool(false))
      .orderBy('expires_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (live) return { outcome: 'existing', keyId: live.id, expiresAt: toInteger(live.expires_at as number) };
    const keyId = newId('key');
    await trx
      .insertInto('api_keys')
      .values({
        id: keyId,
        account_id: client.account_id,
        project_id: null,
        name: input.key.name,
        scope: 'inference',
        env: input.key.env,
        key_hash: input.key.hash,
        prefix: input.key.prefix,
        spend_limit_micros: null,
        rate_limit_rpm: null,
        spent_micros: 0,
        disabled: ctx.dialect.bool(false),
        expires_at: input.expiresAt,
        oauth_client_id: client.id,
        created_at: ctx.now(),
      })
      .execute();
    return { outcome: 'minted', keyId };
  });
}

function mapOAuthClient(row: Selectable<OAuthClientsTable>): OAuthClient {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    secretHash: row.secret_hash,
    createdAt: toInteger(row.created_at),
  };
}

function mapOAuthCode(row: Selectable<OAuthCodesTable>): OAuthCode {
  return {
    codeHash: row.code_hash,
    clientId: row.client_id,
    accountId: row.account_id,
    redirectUri: row.redirect_uri,
    codeChallenge: row.code_challenge,
    spendLimitMicros: toNullableInteger(row.spend_limit_micros),
    createdAt: toInteger(row.created_at),
    expiresAt: toInteger(row.expires_at),
    usedAt: toNullableInteger(row.used_at),
    keyId: row.key_id,
  };
}
