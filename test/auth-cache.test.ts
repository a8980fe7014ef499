import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { buildCatalogue, createGateway, type Gateway, type Storage } from '@tollgate/core';
import { createPgliteStorage } from '@tollgate/storage-postgres';
import { createSqliteStorage } from '@tollgate/storage-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOnlyConfig } from './helpers/demo-config.js';
import { call } from './helpers/http.js';
import { silentLogger } from './helpers/start-e2e-gateway.js';
import { createTenant, type Tenant } from './helpers/tenant.js';

/**
 * On a storage that announces key and account changes (Postgres, here PGlite; SQLite, its own
 * only), a model call authenticates from memory; a change made through any gateway on the database
 * is seen at once by the gateway that made it, and by every other one within the cache's bound
 * (Postgres: when the notification arrives; SQLite: when the 1 s TTL ends).
 */
const catalogue = buildCatalogue(demoOnlyConfig, {});
const CHAT = { model: 'demo/chat-small', messages: [{ role: 'user', content: 'hi' }] };
const SCHEMA = 'auth_cache_test';

/** Two storages on one database (as two processes would have), and how to close what is left. */
const databases: { name: string; open: () => Promise<[Storage, Storage, () => Promise<void>]> }[] = [
  {
    name: 'PGlite: the Postgres change feed in one process',
    async open() {
      const pglite = await PGlite.create();
      const a = await createPgliteStorage({ pglite, schema: SCHEMA });
      const b = await createPgliteStorage({ pglite, schema: SCHEMA });
      return [a, b, () => pglite.close()];
    },
  },
  {
    name: 'SQLite: two connections to one file',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'tollgate-auth-cache-'));
      const path = join(dir, 'auth.db');
      const a = await createSqliteStorage({ path });
      const b = await createSqliteStorage({ path });
      return [a, b, async () => rmSync(dir, { recursive: true, force: true })];
    },
  },
];

describe.each(databases)('the authentication cache ($name)', ({ open }) => {
  let first: Storage;
  let second: Storage;
  let closeDatabase: () => Promise<void>;
  let tenant: Tenant;
  /** How many times each storage looked a key up by its hash. */
  const lookups = { first: 0, second: 0 };

  /** `storage` counting its `findApiKeyByHash` calls into `lookups[name]`. */
  function counting(storage: Storage, name: keyof typeof lookups): Storage {
    return new Proxy(storage, {
      get(target, property, receiver) {
        if (property === 'findApiKeyByHash') {
          return (hash: string) => {
            lookups[name] += 1;
            return target.findApiKeyByHash(hash);
          };
        }
        return Reflect.get(target, property, receiver);
      },
    });
  }

  const gateways: Gateway[] = [];
  function gateway(
    storage: Storage,
    authCacheMs?: number,
  ): (path: string, init?: Parameters<typeof call>[2]) => ReturnType<typeof call> {
    const gw = createGateway(storage, catalogue, {
      logger: silentLogger,
      ...(authCacheMs !== undefined && { authCacheMs }),
    });
    gateways.push(gw);
    return (path, init) =>
      call('http://gateway.test', path, init, (url, request) => gw.fetch(new Request(url, request)));
  }

  beforeAll(async () => {
    const [a, b, close] = await open();
    first = counting(a, 'first');
    second = counting(b, 'second');
    closeDatabase = close;
    tenant = await createTenant(first);
  });

  afterAll(async () => {
    for (const gw of gateways.splice(0)) await gw.close();
    await first?.close();
    await second?.close();
    await closeDatabase?.();
  });

  it('authenticates repeated model calls from memory, and reads /v1/key fresh', async () => {
    const viaFirst = gateway(first);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const before = lookups.first;
    for (let i = 0; i < 3; i++) {
      expect((await viaFirst('/v1/chat/completions', { key: tenant.inferenceKey, json: CHAT })).status).toBe(
        200,
      );
    }
    expect(lookups.first - before).toBe(1);
    const info = await viaFirst('/v1/key', { key: tenant.inferenceKey });
    expect(info.status).toBe(200);
    expect(lookups.first - before).toBe(2);
  });

  it('a key revoked through one gateway is refused at once there, and within a second by another', async () => {
    const viaFirst = gateway(first);
    const viaSecond = gateway(second);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const created = await viaFirst('/v1/keys', {
      method: 'POST',
      key: tenant.provisioningKey,
      json: { name: 'soon revoked' },
    });
    const { id, key } = created.body.data;
    expect((await viaFirst('/v1/chat/completions', { key, json: CHAT })).status).toBe(200);
    expect((await viaSecond('/v1/chat/completions', { key, json: CHAT })).status).toBe(200);

    expect((await viaFirst(`/v1/keys/${id}`, { method: 'DELETE', key: tenant.provisioningKey })).status).toBe(
      200,
    );
    const here = await viaFirst('/v1/chat/completions', { key, json: CHAT });
    expect([here.status, here.body.error.code]).toEqual([401, 'key_revoked']);
    // The bound is the 1 s TTL; a quarter second more for a loaded machine to run the loop.
    const deadline = Date.now() + 1_250;
    let there = await viaSecond('/v1/chat/completions', { key, json: CHAT });
    while (there.status === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      there = await viaSecond('/v1/chat/completions', { key, json: CHAT });
    }
    expect([there.status, there.body.error.code]).toEqual([401, 'key_revoked']);
  });

  it('an account suspended in storage is refused by model calls at once', async () => {
    const other = await createTenant(first, { name: 'to suspend' });
    const viaFirst = gateway(first);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await viaFirst('/v1/chat/completions', { key: other.inferenceKey, json: CHAT })).status).toBe(
      200,
    );
    await first.setAccountSuspended(other.account.id, true);
    const refused = await viaFirst('/v1/chat/completions', { key: other.inferenceKey, json: CHAT });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'account_suspended']);
  });

  it('with authCacheMs 0, every call reads the key', async () => {
    const uncached = gateway(second, 0);
    const before = lookups.second;
    for (let i = 0; i < 3; i++) {
      expect((await uncached('/v1/chat/completions', { key: tenant.inferenceKey, json: CHAT })).status).toBe(
        200,
      );
    }
    expect(lookups.second - before).toBe(3);
  });
});
