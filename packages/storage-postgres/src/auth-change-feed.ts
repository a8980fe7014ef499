/*
 * Postgres's `NotifyChannel`s for core's `withAuthChangeFeed`: `pg_notify` to send, `LISTEN` to
 * hear, on a server (every process on the database) or on PGlite (one process).
 */
import { EVERY_ACCOUNT, type NotifyChannel } from '@tollgate/core';
import type { PGlite } from 'kysely';
import pg from 'pg';
import { quoteIdentifier } from './migrate-postgres.js';

/** How long the listening connection waits before it reconnects after losing the server. */
const RECONNECT_MS = 1_000;

/**
 * The channel every process on one schema (or on the default one) of a database shares.
 * Channel names are identifiers: at most 63 bytes, so a long schema name is cut.
 */
export function authChannelName(schema: string | undefined): string {
  return `tollgate_auth${schema === undefined ? '' : `_${schema}`}`.slice(0, 63);
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
