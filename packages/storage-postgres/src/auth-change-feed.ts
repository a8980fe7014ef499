import { type AuthChange, type AuthChangeFeed, afterAuthChanges, type Storage } from '@tollgate/core';
import type { PGlite } from 'kysely';
import pg from 'pg';
import { quoteIdentifier } from './migrate-postgres.js';

/** The payload that stands for "every account" (`AuthChange` `null`). */
const EVERY_ACCOUNT = '*';
/** How long the listening connection waits before it reconnects after losing the server. */
const RECONNECT_MS = 1_000;

/** How one database carries the notifications: `pg_notify` to send, `LISTEN` to hear. */
export interface NotifyChannel {
  notify(payload: string): Promise<void>;
  /** Calls `onPayload` for each notification; `onLost` when notifications may have been missed. */
  listen(onPayload: (payload: string) => void, onLost: () => void): Promise<() => Promise<void>>;
}

/**
 * The channel every process on one schema (or on the default one) of a database shares.
 * Channel names are identifiers: at most 63 bytes, so a long schema name is cut.
 */
export function authChannelName(schema: string | undefined): string {
  return `tollgate_auth${schema === undefined ? '' : `_${schema}`}`.slice(0, 63);
}

/**
 * `storage` telling every process on its database about authentication changes: each
 * auth-changing operation (`AUTH_CHANGING_OPERATIONS`) tells this storage's listeners before it
 * returns, then sends a `pg_notify` naming its account, which `subscribeAuthChanges` hears from
 * every storage on the database (this one's own echo included: a second, harmless forget). A gateway then
 * caches authentications (see core's `AuthCache`): a revoked key or a suspended account stops
 * working everywhere once the notification arrives (milliseconds), and within the cache's TTL
 * (1 s) should it be lost.
 */
export function withAuthChangeFeed(storage: Storage, channel: NotifyChannel): Storage & AuthChangeFeed {
  const listeners = new Set<(change: AuthChange) => void>();
  const listening = new Set<() => Promise<void>>();
  // This storage's own changes reach its listeners before the operation returns (its caller may
  // use the key at once); other processes hear them through the database.
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

/** The channel on a Postgres server: notifications through the pool, one connection listening. */
export function serverChannel(pool: pg.Pool, connectionString: string, name: string): NotifyChannel {
  return {
    async notify(payload) {
      await pool.query('SELECT pg_notify($1, $2)', [name, payload]);
    },
    async listen(onPayload, onLost) {
      let client: pg.Client | null = null;
      let stopped = false;
      let retryTimer: ReturnType<typeof setTimeout> | undefined;
      /** Listens again after a second, until stopped; every failed attempt counts as a loss. */
      const retry = (): void => {
        onLost();
        if (!stopped) retryTimer = setTimeout(() => void connect().catch(retry), RECONNECT_MS);
      };
      const connect = async (): Promise<void> => {
        const next = new pg.Client({ connectionString });
        next.on('notification', (message) => onPayload(message.payload ?? EVERY_ACCOUNT));
        let lost = false;
        next.on('error', () => {
          // Missed notifications cannot be known: forget everything, and listen again shortly.
          if (lost) return;
          lost = true;
          if (client === next) client = null;
          void next.end().catch(() => {});
          retry();
        });
        try {
          await next.connect();
          await next.query(`LISTEN ${quoteIdentifier(name)}`);
        } catch (error) {
          // The caller retries (or reports); this client's own 'error' must not retry twice.
          lost = true;
          void next.end().catch(() => {});
          throw error;
        }
        if (stopped) await next.end();
        else client = next;
      };
      await connect();
      return async () => {
        stopped = true;
        clearTimeout(retryTimer);
        await client?.end().catch(() => {});
        client = null;
      };
    },
  };
}

/** The channel on a PGlite instance (one process, so notifications never leave it). */
export function pgliteChannel(pglite: PGlite, name: string): NotifyChannel {
  const instance = pglite as unknown as {
    query(sql: string, params: unknown[]): Promise<unknown>;
    listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  };
  return {
    async notify(payload) {
      await instance.query('SELECT pg_notify($1, $2)', [name, payload]);
    },
    async listen(onPayload) {
      const unlisten = await instance.listen(name, onPayload);
      return async () => {
        await unlisten();
      };
    },
  };
}
