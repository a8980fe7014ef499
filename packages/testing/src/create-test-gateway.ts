import {
  buildCatalogue,
  createApiKey,
  createGateway,
  FakeClock,
  formatMicrosAsUsd,
  type Gateway,
  type GatewayConfigInput,
  type GatewayLogger,
  type GatewayOptions,
  type KeyEnv,
  type LedgerEntry,
  MB,
  parseGatewayConfig,
  parseUsdToMicros,
  type RequestRecord,
  type Storage,
  topUpAccount,
  type WalkClock,
} from '@tollgate/core';
import { createSqliteStorage } from '@tollgate/storage-sqlite';
import type { FakeUpstream } from './fake-upstream.js';
import { createUpstreamRouter } from './upstream-router.js';

export interface TestGatewayOptions<C extends WalkClock = FakeClock> {
  /** The account's credit, decimal USD; default `"10"`. */
  creditUsd?: string;
  /**
   * Where `api_key_env` names are looked up. By default every provider's `api_key_env` holds a
   * placeholder key, so every provider is available; map a name to `''` to leave one without a key.
   */
  env?: Record<string, string | undefined>;
  /** Where the test clock starts (epoch ms or a Date); default the real time at creation. */
  startAt?: number | Date;
  /**
   * The gateway's clock instead of a `FakeClock` at `startAt`: one on real time when the test
   * waits for the gateway's own timers (a batch worker's poll, say). A clock without `advance`
   * leaves the fakes' `delayMs`, `stall` and `fail("timeout")` to real time.
   */
  clock?: C;
  /**
   * The store to run on instead of a new in-memory SQLite (a Postgres, a SQLite file): the kit
   * creates its account and keys there, and `close()` leaves it open for the test to close.
   */
  storage?: Storage;
  /** Whether the keys are `gw_live_` (default) or `gw_test_` keys. */
  keyEnv?: KeyEnv;
  /**
   * Wraps the store the gateway sees (to inject faults or count calls); the kit's own reads
   * (`ledger()`, `records()`, `storage`) go to the store underneath.
   */
  wrapStorage?: (storage: Storage) => Storage;
  /** More options of `createGateway` (the kit sets the HTTP client, the clock and a silent logger). */
  gateway?: Omit<GatewayOptions, 'httpClient' | 'clock'>;
}

/** A gateway in-process over an in-memory store, every provider answered by a scripted fake. */
export interface TestGateway<C extends WalkClock = FakeClock> {
  /** The gateway's own `fetch`; rejects when a request reached a fake upstream with no answer. */
  fetch(request: Request): Promise<Response>;
  /** A JSON `POST` of `body` (a `GET` without one) to `path` with the inference key. */
  request(path: string, body?: unknown, init?: RequestInit): Promise<Response>;
  /** The fake upstream of the config's provider `providerName`. */
  upstream(providerName: string): FakeUpstream;
  /** Time as the gateway and the store see it; `advance(ms)` moves it and fires what falls due. */
  clock: C;
  /** The account's ledger, oldest first. */
  ledger(): Promise<LedgerEntry[]>;
  /** The account's request records, oldest first. */
  records(): Promise<RequestRecord[]>;
  /** The account's balance, decimal USD with six places (`"9.999850"`). */
  balanceUsd(): Promise<string>;
  /** The inference key. */
  key: string;
  provisioningKey: string;
  accountId: string;
  /** What the kit is built on, for what it does not wrap (`storage`: the store underneath). */
  gateway: Gateway;
  storage: Storage;
  /** Closes the gateway and the store (not one given as `storage`); rejects when a fake was left without an answer meanwhile. */
  close(): Promise<void>;
}

const silentLogger: GatewayLogger = { info() {}, warn() {}, error() {} };
const ORIGIN = 'http://tollgate.test';

/**
 * A Tollgate gateway for unit tests: the config object (the JSON config's shape), one account with
 * `creditUsd` and an inference key, SQLite in memory, and a fake upstream per provider.
 */
export async function createTestGateway<C extends WalkClock = FakeClock>(
  config: GatewayConfigInput,
  options: TestGatewayOptions<C> = {},
): Promise<TestGateway<C>> {
  const parsed = parseGatewayConfig(config);
  const placeholders = Object.fromEntries(
    Object.entries(parsed.providers).flatMap(([name, p]) =>
      'api_key_env' in p && p.api_key_env ? [[p.api_key_env, `test-key-${name}`]] : [],
    ),
  );
  const catalogue = buildCatalogue(parsed, { ...placeholders, ...options.env });
  const startAt =
    options.startAt instanceof Date ? options.startAt.getTime() : (options.startAt ?? Date.now());
  const clock = options.clock ?? (new FakeClock(startAt, [0.5]) as WalkClock as C);
  const router = createUpstreamRouter(catalogue, clock);
  const storage =
    options.storage ?? (await createSqliteStorage({ path: ':memory:', now: () => clock.now() }));
  const gateway = createGateway(options.wrapStorage?.(storage) ?? storage, catalogue, {
    logger: silentLogger,
    defaultRateLimitRpm: parsed.defaults.rate_limit_rpm,
    maxBodyBytes: Math.floor(parsed.limits.max_request_mb * MB),
    maxAttachmentBytes: Math.floor(parsed.limits.max_attachment_mb * MB),
    batches: { concurrency: parsed.batches.concurrency, leaseMs: parsed.batches.lease_ms },
    oauth: { clientCredentialsTtlS: parsed.oauth.client_credentials_ttl_s },
    ...options.gateway,
    httpClient: router.http,
    clock,
  });

  const account = await storage.createAccount({ name: 'test account' });
  const credit = parseUsdToMicros(options.creditUsd ?? '10');
  if (credit > 0) await topUpAccount(storage, account.id, credit, 0);
  const keyEnv = options.keyEnv ?? 'live';
  const key = { accountId: account.id, env: keyEnv } as const;
  const provisioning = await createApiKey(storage, { ...key, name: 'provisioning', scope: 'provisioning' });
  const inference = await createApiKey(storage, { ...key, name: 'inference', scope: 'inference' });

  const fetchChecked = async (request: Request): Promise<Response> => {
    const response = await gateway.fetch(request);
    const unanswered = router.takeUnanswered();
    if (unanswered) {
      await response.body?.cancel().catch(() => {});
      throw unanswered;
    }
    return response;
  };

  return {
    fetch: fetchChecked,
    request(path, body, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${inference.secret}`);
      if (body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
      const method = init.method ?? (body === undefined ? 'GET' : 'POST');
      const payload = body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body);
      return fetchChecked(new Request(new URL(path, ORIGIN), { ...init, method, headers, body: payload }));
    },
    upstream: (name) => router.upstream(name),
    clock,
    ledger: () => storage.listLedgerEntries(account.id),
    async records() {
      const page = await storage.listRequestRecordsPage(account.id, { since: 0, limit: 100_000 });
      return page.reverse();
    },
    async balanceUsd() {
      const current = await storage.getAccount(account.id);
      return formatMicrosAsUsd(current?.balanceMicros ?? 0);
    },
    key: inference.secret,
    provisioningKey: provisioning.secret,
    accountId: account.id,
    gateway,
    storage,
    async close() {
      try {
        await gateway.close();
      } finally {
        if (!options.storage) await storage.close();
      }
      const unanswered = router.takeUnanswered();
      if (unanswered) throw unanswered;
    },
  };
}
