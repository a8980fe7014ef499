import type { LimitReset } from '../metering/limit-windows.js';
import type { EpochMs, Micros } from './scalars.js';

/** The API keys of the storage contract (`Storage`, types.ts: same conventions). */

export type KeyScope = 'inference' | 'provisioning';
export type KeyEnv = 'live' | 'test';

/** An API key row. The secret itself is never stored: only its SHA-256 hash (not exposed here). */
export interface ApiKey {
  id: string;
  accountId: string;
  projectId: string | null;
  name: string;
  scope: KeyScope;
  env: KeyEnv;
  /** The first characters of the key (environment prefix plus a few more); safe to display. */
  prefix: string;
  /** Spend cap: of the lifetime, or of the current window when `limitReset` is set; `null` = no cap. */
  spendLimitMicros: Micros | null;
  /** The calendar window (UTC) the cap applies to; `null` = the lifetime. */
  limitReset: LimitReset | null;
  /** Requests per minute; `null` = the account default applies. */
  rateLimitRpm: number | null;
  /** Lifetime spend charged to this key (maintained by settlement). */
  spentMicros: Micros;
  /** Refused at authentication (`401 key_revoked`); a revoked key is always disabled too. */
  disabled: boolean;
  /** Revoked for good: `disabled` can never be cleared again. */
  revoked: boolean;
  /** From this instant on the key is refused at authentication; `null` = it never expires. */
  expiresAt: EpochMs | null;
  /** The OAuth client the key was minted for (either grant); deleting the client revokes it. */
  oauthClientId: string | null;
  createdAt: EpochMs;
}

export interface NewApiKey {
  accountId: string;
  projectId?: string | null;
  name: string;
  scope: KeyScope;
  env: KeyEnv;
  /** Lower-case hex SHA-256 of the full key string. */
  hash: string;
  prefix: string;
  spendLimitMicros?: Micros | null;
  limitReset?: LimitReset | null;
  rateLimitRpm?: number | null;
}

/**
 * Fields of a key that may change. `undefined` = leave as is; `null` = clear the limit.
 * `disabled: false` never enables a revoked key (it stays disabled).
 */
export interface ApiKeyPatch {
  name?: string;
  spendLimitMicros?: Micros | null;
  limitReset?: LimitReset | null;
  rateLimitRpm?: number | null;
  disabled?: boolean;
}

/** What a key was charged in the UTC day, week (from Monday) and month containing an instant. */
export interface KeyWindowSpend {
  dailyMicros: Micros;
  weeklyMicros: Micros;
  monthlyMicros: Micros;
}

export interface KeyWindowsStorage {
  /**
   * Each key's spend in the UTC day, week and month that contain `at`: a charge counts in the day
   * its hold was taken (the settle's day when it had none). Keys that spent nothing in them are
   * absent. For the key views; the reserve reads the same figures under the account's lock.
   */
  getKeyWindowSpend(keyIds: readonly string[], at: EpochMs): Promise<Map<string, KeyWindowSpend>>;
}
