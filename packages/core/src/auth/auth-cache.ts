import { LRUCache } from 'lru-cache';
import type { AuthChange, AuthChangeFeed } from '../storage/auth-changes.js';
import type { KeyAndAccount } from '../storage/types.js';
import type { GatewayLogger } from '../telemetry/gateway-logger.js';

/** How long a cached authentication may be used: the bound on its staleness should a change be missed. */
export const DEFAULT_AUTH_CACHE_MS = 1_000;
const MAX_KEYS = 10_000;

/**
 * This process's recent authentications by key hash, so that a model call needs no database read to
 * authenticate. Only for a storage with an `AuthChangeFeed`: every change to a key, its account or
 * the account's BYOK keys and guardrails forgets that account's entries (`forget`), here at once
 * and in other processes when the database's notification arrives. An entry also lives at most
 * `ttlMs`, which bounds the staleness of a change no notification told (a dropped listening
 * connection; another process on the same SQLite file). Money is never read from here: holds and
 * charges read the database.
 */
export class AuthCache {
  private readonly entries: LRUCache<string, KeyAndAccount>;
  /** Counts `forget`s, so that a read begun before one is not kept after it (`set`). */
  private changes = 0;
  /** Whether changes are being heard: until then (and after a failure) nothing is kept. */
  private listening = false;

  constructor(ttlMs: number = DEFAULT_AUTH_CACHE_MS) {
    this.entries = new LRUCache({ max: MAX_KEYS, ttl: ttlMs, ttlAutopurge: false });
  }

  get(keyHash: string): KeyAndAccount | undefined {
    return this.listening ? this.entries.get(keyHash) : undefined;
  }

  /** Changes are heard from now on (true), or no longer (false: everything is forgotten). */
  setListening(listening: boolean): void {
    this.listening = listening;
    if (!listening) this.forget(null);
  }

  /** Where the changes stand now: pass it to `set` with what a read begun now found. */
  mark(): number {
    return this.changes;
  }

  /** Keeps what a read found, unless a change was heard since that read began (`mark`). */
  set(keyHash: string, found: KeyAndAccount, mark: number): void {
    if (this.listening && mark === this.changes) this.entries.set(keyHash, found);
  }

  /** Forgets the account's entries, or every entry for `null`. */
  forget(change: AuthChange): void {
    this.changes += 1;
    if (change === null) {
      this.entries.clear();
      return;
    }
    for (const [hash, found] of this.entries.entries()) {
      if (found.account.id === change) this.entries.delete(hash);
    }
  }
}

/**
 * An `AuthCache` for a storage with an `AuthChangeFeed` (which tells its own changes before they
 * return, and other processes' as they arrive), unless `ttlMs` is 0; else none. `close` stops
 * listening.
 */
export function cacheAuthentications(
  storage: Partial<AuthChangeFeed>,
  ttlMs: number = DEFAULT_AUTH_CACHE_MS,
  logger: GatewayLogger,
): { cache: AuthCache | null; close: () => Promise<void> } {
  const feed = storage.subscribeAuthChanges;
  if (feed === undefined || ttlMs === 0) return { cache: null, close: async () => {} };
  const cache = new AuthCache(ttlMs);
  const subscribed = feed
    .call(storage, (change) => cache.forget(change))
    .then(
      (unsubscribe) => {
        cache.setListening(true);
        return unsubscribe;
      },
      (error: unknown) => {
        logger.error({ err: error }, 'cannot listen for key changes: authentications are not cached');
        return async () => {};
      },
    );
  return {
    cache,
    close: async () => {
      cache.setListening(false);
      await (await subscribed)();
    },
  };
}
