const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const ID_LENGTH = 20;
/** Base-36 digits of the millisecond clock: 9 cover the next three thousand years. */
const TIME_LENGTH = 9;
const RANDOM_LENGTH = ID_LENGTH - TIME_LENGTH;

/**
 * Random bytes drawn from `crypto.getRandomValues` a few kilobytes at a time: one call per ~300 ids
 * instead of one per id, which showed in profiles of the request path (every request mints several
 * ids). Each byte is used once. Ids are identifiers, not secrets (API keys are minted apart).
 */
const pool = new Uint8Array(RANDOM_LENGTH * 300);
let used = pool.length;

/**
 * A new opaque id such as `req_0mie3kq7x…`: the prefix, an underscore, then 20 base-36 characters:
 * the millisecond it was made (9), then 11 random ones (about 57 bits, from `crypto.getRandomValues`).
 *
 * Leading with the time makes the ids of one table sort roughly by age, so a new row's primary key
 * (and every index that holds a request id) is written at the right-hand edge of its B-tree instead
 * of at a random page: fewer pages dirtied per commit and a small working set however large the
 * table grows. On SQLite this halved the cost of a group commit at c=64 (480 → 247 µs).
 */
export function newId(prefix: string): string {
  if (used + RANDOM_LENGTH > pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  let out = `${prefix}_${Date.now().toString(36).padStart(TIME_LENGTH, '0')}`;
  for (let i = used; i < used + RANDOM_LENGTH; i++) out += ALPHABET[pool[i]! % 36];
  used += RANDOM_LENGTH;
  return out;
}
