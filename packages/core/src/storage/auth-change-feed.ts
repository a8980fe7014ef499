import { type AuthChange, type AuthChangeFeed, afterAuthChanges } from './auth-changes.js';
import type { Storage } from './types.js';

/** The payload that stands for "every account" (`AuthChange` `null`). */
export const EVERY_ACCOUNT = '*';

/** How a database carries authentication changes between the processes that share it. */
export interface NotifyChannel {
  notify(payload: string): Promise<void>;
  /** Calls `onPayload` for each notification; `onLost` when notifications may have been missed. */
  listen(onPayload: (payload: string) => void, onLost: () => void): Promise<() => Promise<void>>;
}

/**
 * A channel that carries nothing between processes (SQLite: a file has no notifications). A
 * storage's own changes still reach its listeners at once (`withAuthChangeFeed`); another
 * process's change is then seen once the cached authentication expires (`AuthCache`'s TTL, 1 s).
 */
export const PROCESS_LOCAL_CHANNEL: NotifyChannel = {
  notify: async () => {},
  listen: async () => async () => {},
};

/**
 * `storage` telling its listeners about authentication changes: each auth-changing operation
 * (`AUTH_CHANGING_OPERATIONS`) tells this storage's listeners before it returns, then `notify`s the
 * channel naming its account, which `subscribeAuthChanges` hears from every storage on the database
 * (this one's own echo included: a second, harmless forget). A gateway then caches
 * authentications (see `AuthCache`): a revoked key or a suspended account stops working here at
 * once, elsewhere once the notification arrives, and everywhere within the cache's TTL (1 s)
 * should it be lost or never sent.
 */
export function withAuthChangeFeed(storage: Storage, channel: NotifyChannel): Storage & AuthChangeFeed {
  const listeners = new Set<(change: AuthChange) => void>();
  const listening = new Set<() => Promise<void>>();
  // This storage's own changes reach its listeners before the operation returns (its caller may
  // use the key at once); other processes hear them through the channel.
  const notifying = afterAuthChanges(storage, async (change: AuthChange) => {
    for (const listener of listeners) listener(change);
    await channel.notify(change ?? EVERY_ACCOUNT);
  });
  const subscribeAuthChanges: AuthChangeFeed['subscribeAuthChanges'] = async (listener) => {
    const stop = await channel.listen(
      (payload) => listener(payload === EVERY_ACCOUNT ? null : payload),
      () => listener(null),
    );
    listeners.add(listener);
    const unsubscribe = async () => {
      listeners.delete(listener);
      if (listening.delete(unsubscribe)) await stop();
    };
    listening.add(unsubscribe);
    return unsubscribe;
  };
  // A plain object again: the spread reads every operation through the proxy, wrapped or not.
  return {
    ...notifying,
    subscribeAuthChanges,
    // Closing the storage also stops its listeners (their connections would keep Node running).
    close: async () => {
      await Promise.all([...listening].map((unsubscribe) => unsubscribe()));
      await storage.close();
    },
  };
}
