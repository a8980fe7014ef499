import { z } from 'zod';
import type { ByokKey } from '../../storage/account-features.js';

/** A BYOK key as the API and the CLI show it: never the key, nor anything derived from it. */
export const byokKeyViewSchema = z
  .object({
    id: z.string(),
    provider: z.string(),
    label: z.string().nullable(),
    allow_fallback: z.boolean(),
    created_at: z.string(),
  })
  .meta({ id: 'ByokKey' });

/** The view of one stored BYOK key (`created_at` in ISO 8601). */
export function byokKeyView(key: ByokKey): z.output<typeof byokKeyViewSchema> {
  return {
    id: key.id,
    provider: key.provider,
    label: key.label,
    allow_fallback: key.allowFallback,
    created_at: new Date(key.createdAt).toISOString(),
  };
}
