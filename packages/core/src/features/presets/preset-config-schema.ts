import { z } from 'zod';
import { hasNul, NUL_MESSAGE } from '../../http/stored-text.js';
import { PRESET_MODEL_PREFIX } from './apply-preset.js';

/**
 * Fields that identify one request rather than configure many: a preset giving them would make no
 * sense (or, for `preset`, would name another preset).
 */
const REQUEST_ONLY_FIELDS = ['messages', 'input', 'stream', 'preset', 'metadata'] as const;

const strings = z.array(z.string('must be a string'), 'must be an array of strings');

/**
 * A preset's `config`: any object, its known fields type-checked (`model`, `models`, `provider`,
 * `transforms`, `plugins`, `system`, `cache`); other fields are generation parameters checked when a
 * request uses the preset. Refuses the request-only fields and NUL characters anywhere (Postgres
 * `jsonb` cannot store one).
 */
export const presetConfigSchema = z
  .looseObject(
    {
      model: z
        .string('must be a string')
        .min(1, 'must be a non-empty string')
        .refine((model) => !model.startsWith(PRESET_MODEL_PREFIX), 'must name a model, not a preset')
        .optional(),
      models: z
        .array(
          z.string('must be a string').min(1, 'must be non-empty strings'),
          'must be an array of strings',
        )
        .optional(),
      provider: z.record(z.string(), z.unknown(), 'must be an object').optional(),
      transforms: strings.optional(),
      plugins: z.array(z.unknown(), 'must be an array').optional(),
      system: z.string('must be a string').optional(),
      cache: z.boolean('must be a boolean').optional(),
    },
    'must be an object',
  )
  .superRefine((config, ctx) => {
    for (const field of REQUEST_ONLY_FIELDS) {
      if (field in config) {
        ctx.addIssue({ code: 'custom', path: [field], message: 'belongs to a request, not to a preset' });
      }
    }
    const nul = pathToNul(config, []);
    if (nul) ctx.addIssue({ code: 'custom', path: nul, message: NUL_MESSAGE });
  })
  .meta({ id: 'PresetConfig' });

/** The path of the first string or key holding a NUL character, or `null`. */
function pathToNul(value: unknown, path: (string | number)[]): (string | number)[] | null {
  if (typeof value === 'string') return hasNul(value) ? path : null;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = pathToNul(item, [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    // The field is named only by its position: a key with a NUL is not worth quoting.
    if (hasNul(key)) return path;
    const found = pathToNul(item, [...path, key]);
    if (found) return found;
  }
  return null;
}
