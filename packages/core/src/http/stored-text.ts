import { z } from 'zod';

/**
 * Why a text is refused. Postgres `text` cannot hold U+0000 (a write fails, a comparison cannot even
 * be bound) while SQLite can; refusing it on the way in makes both stores answer alike: `400`.
 */
export const NUL_MESSAGE = 'must not contain NUL characters';

/** Whether `text` holds a NUL character (U+0000), which no stored text, name or id may hold. */
export function hasNul(text: string): boolean {
  return text.includes('\u0000');
}

/**
 * The schema of a string the gateway stores or looks up (a name, description, pattern, label,
 * URI, id): refused with {@link NUL_MESSAGE} when it holds a NUL. Chain the field's own rules after
 * it (`storedText().trim().max(100)`).
 */
export function storedText(typeMessage = 'must be a string') {
  return z.string(typeMessage).refine((text) => !hasNul(text), NUL_MESSAGE);
}
