import type {
  Gateway,
  GatewayConfig,
  GatewayOptions,
  RequestRecord,
  ReserveCreditInput,
  SettleInput,
  Storage,
} from '@tollgate/core';
import BetterSqlite3 from 'better-sqlite3';
import { startGatewayUnderTest } from './gateway-under-test.js';
import type { InstantClock } from './instant-clock.js';
import { type OpenedStorage, openSqlite } from './storage-variants.js';

/**
 * What the gateway asked its storage to do with each request's money, counted per request id: the
 * holds it was granted (`reserveCredit` answered ok), every `settleRequest` it attempted (whether or
 * not it landed), and every record it wrote outside a settle (`insertRequestRecord`). Every other
 * method is the real one.
 */
export class StorageCounts {
  /** requestId → the amount of the hold `reserveCredit` granted. */
  readonly holds = new Map<string, { accountId: string; amountMicros: number }>();
  /** record id → how many times `settleRequest` was called for it. */
  readonly settles = new Map<string, number>();
  /** record id → the statuses written by `insertRequestRecord`, in order. */
  readonly inserts = new Map<string, string[]>();

  wrap(storage: Storage): Storage {
    return new Proxy(storage, {
      get: (target, property) => {
        if (property === 'reserveCredit') {
          return async (input: ReserveCreditInput) => {
            const result = await target.reserveCredit(input);
            if (result.ok) {
              this.holds.set(input.requestId, {
                accountId: input.accountId,
                amountMicros: result.reservation.amountMicros,
              });
            }
            return result;
          };
        }
        if (property === 'settleRequest') {
          return (input: SettleInput) => {
            const id = input.record.id;
            this.settles.set(id, (this.settles.get(id) ?? 0) + 1);
            return target.settleRequest(input);
          };
        }
        if (property === 'insertRequestRecord') {
          return (record: RequestRecord) => {
            this.inserts.set(record.id, [...(this.inserts.get(record.id) ?? []), record.status]);
            return target.insertRequestRecord(record);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}

/** The in-process gateway on a counting storage, with a raw SQL line into the same SQLite file. */
export interface CountingGateway {
  gateway: Gateway;
  opened: OpenedStorage & { path: string };
  /** The real storage (not counted): read through it freely. */
  storage: Storage;
  counts: StorageCounts;
  clock: InstantClock;
  /** A read-only query (with `?` parameters) on a separate plain connection to the database file. */
  raw(sql: string, ...params: unknown[]): Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * The shared builder's gateway on the testing kit, on a SQLite file whose storage is wrapped by `StorageCounts`, so a test
 * can see how many times each request was settled, and can read the file with raw SQL (which the
 * kit's own in-memory store does not allow). Every provider is answered by `upstream`, on real time.
 * `config` is made with `testConfig`.
 */
export async function startCountingGateway(
  config: GatewayConfig,
  upstream: typeof fetch,
  options: Omit<GatewayOptions, 'httpClient' | 'clock'> = {},
): Promise<CountingGateway> {
  const counts = new StorageCounts();
  const { logger, ...gatewayOptions } = options;
  const gw = await startGatewayUnderTest({
    config,
    upstream: 'kit',
    open: () => openSqlite(),
    wrapStorage: (storage) => counts.wrap(storage),
    ...(logger && { logger }),
    gateway: gatewayOptions,
  });
  const { opened } = gw;
  for (const [name, provider] of Object.entries(config.providers)) {
    if ('base_url' in provider) gw.kit!.upstream(name).handle(upstream);
  }
  const database = new BetterSqlite3(opened.path);
  database.pragma('busy_timeout = 5000');
  return {
    gateway: gw.gateway,
    opened,
    storage: gw.storage,
    counts,
    clock: gw.clock,
    raw: (sql, ...params) => database.prepare(sql).all(...params) as Record<string, unknown>[],
    async close() {
      database.close();
      await gw.close();
    },
  };
}
