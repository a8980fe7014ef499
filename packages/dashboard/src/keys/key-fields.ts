import type { LimitReset } from '../api/api-types.js';
import { type Parsed, parseOptionalUsd } from '../format/parse-usd.js';

/**
 * A key's name and limits as the API takes them; a null limit is none (spend) or the account default
 * (rate); a null reset caps the lifetime.
 */
export interface KeyPatch {
  name: string;
  spend_limit_usd: number | null;
  limit_reset: LimitReset | null;
  rate_limit_rpm: number | null;
}

/** The key form's fields as typed (`reset`: empty for the lifetime). */
export interface KeyFieldText {
  name: string;
  limit: string;
  reset: LimitReset | '';
  rpm: string;
}

export const EMPTY_KEY_FIELDS: KeyFieldText = { name: '', limit: '', reset: '', rpm: '' };

/** A spend limit field: empty is no limit (null); otherwise a positive USD amount. */
export function parseSpendLimitField(input: string): Parsed<number | null> {
  return parseOptionalUsd(input, 'Spend limit must be a positive amount in USD, or empty for none.');
}

/** A rate limit field: empty is the account default (null); otherwise whole requests per minute. */
export function parseRpmField(input: string): Parsed<number | null> {
  const text = input.trim();
  if (text === '') return { ok: true, value: null };
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    return { ok: false, message: 'Rate limit must be a whole number of requests per minute, or empty.' };
  }
  return { ok: true, value: Number(text) };
}

/** The whole key form, checked in field order; `noName` is the message for an empty name. */
export function parseKeyFields(fields: KeyFieldText, noName: string): Parsed<KeyPatch> {
  const spendLimit = parseSpendLimitField(fields.limit);
  const rateLimit = parseRpmField(fields.rpm);
  if (fields.name.trim() === '') return { ok: false, message: noName };
  if (!spendLimit.ok) return spendLimit;
  if (!rateLimit.ok) return rateLimit;
  return {
    ok: true,
    value: {
      name: fields.name.trim(),
      spend_limit_usd: spendLimit.value,
      limit_reset: fields.reset === '' ? null : fields.reset,
      rate_limit_rpm: rateLimit.value,
    },
  };
}

/** The text a number field starts with for a nullable value. */
export function fieldText(value: number | null): string {
  return value === null ? '' : String(value);
}
