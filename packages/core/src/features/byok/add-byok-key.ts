import { z } from 'zod';
import type { Catalogue } from '../../catalogue/catalogue.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { storedText } from '../../http/stored-text.js';
import { newId } from '../../ids.js';
import type { BodySealer } from '../../protections/sealed-body.js';
import type { AccountFeaturesStorage, ByokKey } from '../../storage/account-features.js';

/**
 * A new BYOK key as the API (`POST /v1/byok`) and the CLI (`tollgate byok add`) take it. Provider
 * keys are printable ASCII without spaces: anything else could not go into an `Authorization`
 * header, and surrounding whitespace (a pasted newline) is trimmed. The rules' messages never quote
 * the key.
 */
export const newByokKeySchema = z
  .object({
    provider: z
      .string('must be a string')
      .min(1, 'must be a provider id of the config')
      .max(100, 'must be a provider id of the config'),
    api_key: z
      .string('must be a string')
      .trim()
      .min(1, 'must not be empty')
      .max(1000, 'must be at most 1000 characters')
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces or control characters'),
    label: storedText()
      .trim()
      .min(1, 'must not be empty')
      .max(100, 'must be at most 100 characters')
      .nullable()
      .optional(),
    allow_fallback: z.boolean('must be a boolean').optional(),
  })
  .strict();

export type NewByokKeyInput = z.output<typeof newByokKeySchema>;

/**
 * Why `provider` cannot take a BYOK key in this deployment (not a provider of its config, or the
 * keyless `demo` format), or `null` when it can. Names the providers that can; no final period.
 */
export function byokProviderProblem(
  catalogue: Pick<Catalogue, 'providers'>,
  provider: string,
): string | null {
  const found = catalogue.providers.get(provider);
  if (found && found.format !== 'demo') return null;
  const usable = [...catalogue.providers.values()].filter((p) => p.format !== 'demo').map((p) => p.id);
  const why = found
    ? `"${provider}" is the keyless demo provider`
    : `no provider "${provider}" in this deployment's config`;
  return `${why}; a BYOK key can be added for ${usable.length > 0 ? usable.join(', ') : 'no provider here'}`;
}

/**
 * Seals the account's provider key under a fresh `byok_…` id (the id is part of what it is sealed
 * with, so it is chosen before the insert) and stores it. The key in clear goes nowhere else.
 * Throws `400 invalid_request` for a provider `byokProviderProblem` refuses; the storage rejects
 * an unknown account.
 */
export async function addByokKey(
  storage: Pick<AccountFeaturesStorage, 'createByokKey'>,
  sealer: BodySealer,
  catalogue: Pick<Catalogue, 'providers'>,
  input: NewByokKeyInput & { accountId: string },
): Promise<ByokKey> {
  const problem = byokProviderProblem(catalogue, input.provider);
  if (problem) throw new GatewayError('invalid_request', `Invalid request body. body.provider: ${problem}.`);
  const id = newId('byok');
  return storage.createByokKey({
    id,
    accountId: input.accountId,
    provider: input.provider,
    label: input.label ?? null,
    allowFallback: input.allow_fallback ?? false,
    sealedKey: await sealer.seal(input.accountId, id, input.api_key),
  });
}
