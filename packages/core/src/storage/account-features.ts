import type { EpochMs } from './scalars.js';

/**
 * The storage of the account features on the request path: the account's own provider keys
 * (BYOK), its presets and its response cache. Same conventions as `Storage` (see types.ts):
 * every lookup takes the account id and reads another account's row as absent.
 */

/** One of the account's own provider keys. The key itself is stored sealed, never in clear. */
export interface ByokKey {
  /** `byok_…`, chosen by the caller (the key is sealed under it before the insert). */
  id: string;
  accountId: string;
  /** A provider id of the deployment's config. */
  provider: string;
  label: string | null;
  /** Whether other failures than a rejected key (401/403) may fail over to the paid routes. */
  allowFallback: boolean;
  /** The provider key, sealed (AES-256-GCM under the server secret); opaque to storage. */
  sealedKey: string;
  createdAt: EpochMs;
}

export type NewByokKey = Omit<ByokKey, 'createdAt'>;

/** A named, reusable piece of request configuration. */
export interface Preset {
  accountId: string;
  /** A slug: `[a-z0-9-]`, 1 to 64 characters; unique per account. */
  name: string;
  description: string | null;
  /** The fields merged into a request that names the preset (a JSON object). */
  config: Record<string, unknown>;
  createdAt: EpochMs;
  updatedAt: EpochMs;
}

/** Fields of a preset that may change: `undefined` = leave as is. */
export interface PresetPatch {
  description?: string | null;
  config?: Record<string, unknown>;
}

/** One cached answer, sealed; found by a lookup id derived from the request. */
export interface CachedResponse {
  accountId: string;
  /** 64 lower-case hex characters (an HMAC of the request under the server secret). */
  lookupId: string;
  /** The answer and what it cost, sealed under a key derived from the request; opaque to storage. */
  sealedBody: string;
  createdAt: EpochMs;
  expiresAt: EpochMs;
}

export interface AccountFeaturesStorage {
  /** Stores a BYOK key. Rejects when the account does not exist or the id is taken. */
  createByokKey(input: NewByokKey): Promise<ByokKey>;

  /** The account's BYOK keys, oldest first (by `createdAt`; keys of the same millisecond in creation order). */
  listByokKeys(accountId: string): Promise<ByokKey[]>;

  /** Deletes one BYOK key of the account; false when it is not the account's (or gone). */
  deleteByokKey(accountId: string, id: string): Promise<boolean>;

  /** Stores a preset; `null` when the account already has one of that name. Rejects for an unknown account. */
  createPreset(input: {
    accountId: string;
    name: string;
    description: string | null;
    config: Record<string, unknown>;
    now: EpochMs;
  }): Promise<Preset | null>;

  /** The account's presets, by name. */
  listPresets(accountId: string): Promise<Preset[]>;

  /** One preset of the account, or `null`. */
  getPreset(accountId: string, name: string): Promise<Preset | null>;

  /** Applies a patch (and sets `updatedAt = now`); `null` when the account has no such preset. */
  updatePreset(accountId: string, name: string, patch: PresetPatch, now: EpochMs): Promise<Preset | null>;

  /** Deletes a preset; false when the account has no such preset. */
  deletePreset(accountId: string, name: string): Promise<boolean>;

  /** The live cached answer for this lookup id (`expiresAt > now`), or `null`. */
  getCachedResponse(accountId: string, lookupId: string, now: EpochMs): Promise<CachedResponse | null>;

  /**
   * Stores a cached answer, replacing any entry of the same account and lookup id in one statement
   * (concurrent writers of the same entry: the last one wins, whole; never a mix).
   */
  putCachedResponse(entry: CachedResponse): Promise<void>;
}
