import type { ApiKey } from '../api/api-types.js';

/** What a key can do now, as the keys page shows it. */
export type KeyStatus = 'active' | 'disabled' | 'revoked' | 'expired';

/** The status of `key` at `now` (epoch ms): a revoked key shows as revoked, though disabled too. */
export function keyStatus(key: ApiKey, now: number): KeyStatus {
  if (key.revoked) return 'revoked';
  if (key.disabled) return 'disabled';
  if (key.expires_at !== null && Date.parse(key.expires_at) <= now) return 'expired';
  return 'active';
}

/** What the page may offer for a key: nothing for a revoked one, and no lockout of the signed-in key. */
export interface KeyActions {
  /** `Disable` (pause) or `Enable` (resume), or none. */
  toggle: 'disable' | 'enable' | null;
  revoke: boolean;
}

/**
 * The actions a key's row offers. A revoked key can never be enabled again; the key the dashboard
 * is signed in with (`signedInKeyId`; `undefined` while not yet known, when any provisioning key may
 * be it) can be neither paused nor revoked from here (the API refuses it too), so the page cannot
 * lock its own user out.
 */
export function keyActions(key: ApiKey, signedInKeyId: string | undefined): KeyActions {
  if (key.revoked) return { toggle: null, revoke: false };
  const maybeSelf = signedInKeyId === undefined ? key.scope === 'provisioning' : key.id === signedInKeyId;
  if (maybeSelf) return { toggle: null, revoke: false };
  return { toggle: key.disabled ? 'enable' : 'disable', revoke: true };
}
