import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { postgresOnlyMigration } from './dialect-only.js';

/**
 * Postgres only (`dialect.nativeReserveAndSettle`; nothing on SQLite): `rate_limit_windows` becomes
 * an UNLOGGED table. Every model call of a key counts its hit by updating that key's window row,
 * and the row's lock is held until COMMIT; on a logged table each COMMIT waits for a WAL flush, so
 * one key's calls queued on the disk, one flush each (the bench's Postgres ceiling once reserve and
 * settle were group-committed). A transaction that writes only unlogged tables commits without
 * waiting for a flush. What it gives up: the counts are emptied when the server restarts after a
 * crash and are not copied to replicas, so after a crash or a failover every key starts a fresh
 * minute. Money is never in this table.
 */
export function postgresUnloggedRateLimitsMigration(dialect: DialectCapabilities): Migration {
  return postgresOnlyMigration(dialect, ['ALTER TABLE rate_limit_windows SET UNLOGGED']);
}
