import type { EpochMs, Preset, PresetPatch } from '@tollgate/core';
import type { Updateable } from 'kysely';
import { requireAccount } from './account-queries.js';
import type { PresetsTable } from './database.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { mapPreset } from './row-mappers.js';

/**
 * `Storage.createPreset`: `INSERT … ON CONFLICT (account_id, name) DO NOTHING RETURNING`, so of
 * concurrent creators of one name exactly one gets the preset and the others `null`, decided by
 * the primary key. The account is checked first in the same transaction for a clear error.
 */
export async function createPreset(
  ctx: QueryContext,
  input: {
    accountId: string;
    name: string;
    description: string | null;
    config: Record<string, unknown>;
    now: EpochMs;
  },
): Promise<Preset | null> {
  assertInteger('now', input.now);
  const row = await write(ctx, async (trx) => {
    await requireAccount(trx, input.accountId);
    return trx
      .insertInto('presets')
      .values({
        account_id: input.accountId,
        name: input.name,
        description: input.description,
        config: JSON.stringify(input.config),
        created_at: input.now,
        updated_at: input.now,
      })
      .onConflict((oc) => oc.columns(['account_id', 'name']).doNothing())
      .returningAll()
      .executeTakeFirst();
  });
  return row ? mapPreset(row) : null;
}

/**
 * `Storage.listPresets`: by name, compared by code unit in JS rather than by `ORDER BY`, whose
 * order on Postgres follows the database's collation (which may ignore the `-` of a slug).
 */
export async function listPresets(ctx: QueryContext, accountId: string): Promise<Preset[]> {
  const rows = await ctx.db.selectFrom('presets').selectAll().where('account_id', '=', accountId).execute();
  return rows.map(mapPreset).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** `Storage.getPreset`: scoped to the account. */
export async function getPreset(ctx: QueryContext, accountId: string, name: string): Promise<Preset | null> {
  const row = await ctx.db
    .selectFrom('presets')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? mapPreset(row) : null;
}

/** `Storage.updatePreset`: one UPDATE … RETURNING scoped to the account; `updated_at` always moves. */
export async function updatePreset(
  ctx: QueryContext,
  accountId: string,
  name: string,
  patch: PresetPatch,
  now: EpochMs,
): Promise<Preset | null> {
  assertInteger('now', now);
  const changes: Updateable<PresetsTable> = { updated_at: now };
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.config !== undefined) changes.config = JSON.stringify(patch.config);
  const row = await write(ctx, (trx) =>
    trx
      .updateTable('presets')
      .set(changes)
      .where('account_id', '=', accountId)
      .where('name', '=', name)
      .returningAll()
      .executeTakeFirst(),
  );
  return row ? mapPreset(row) : null;
}

/** `Storage.deletePreset`: one DELETE scoped to the account. */
export async function deletePreset(ctx: QueryContext, accountId: string, name: string): Promise<boolean> {
  const result = await write(ctx, (trx) =>
    trx.deleteFrom('presets').where('account_id', '=', accountId).where('name', '=', name).executeTakeFirst(),
  );
  return Number(result.numDeletedRows) > 0;
}
