import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOnly } from '../packages/core/src/protections/key-only-attack.test-support.js';
import { call } from './helpers/http.js';
import { MockUpstream } from './helpers/mock-upstream.js';
import { chat, ok, routingConfig, upstreamPath } from './helpers/routing-gateway.js';
import { startE2eGateway } from './helpers/start-e2e-gateway.js';
import { openSqlite } from './helpers/storage-variants.js';
import type { Tenant } from './helpers/tenant.js';

const SECRET = 'an-e2e-server-secret-of-at-least-32-characters';
const COMPLETION = 'the completion only the caller may read';

let dir: string;
let dbPath: string;
let mock: MockUpstream;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-sealing-'));
  dbPath = join(dir, 'tollgate.db');
  mock = await new MockUpstream().start();
});

afterAll(async () => {
  await mock?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A gateway (real Node server) over the test's SQLite file, with the given server secret. */
function startOn(serverSecret: string) {
  return startE2eGateway({
    config: (url) => routingConfig(url),
    open: () => openSqlite(dbPath),
    gateway: { serverSecret },
    mock,
  });
}

function chatWithKey(url: string, tenant: Tenant, idempotencyKey: string) {
  return call(url, '/v1/chat/completions', {
    key: tenant.inferenceKey,
    json: chat('acme/paid'),
    headers: { 'Idempotency-Key': idempotencyKey },
  });
}

describe('stored idempotent bodies are sealed under the server secret', () => {
  let tenant: Tenant;

  it('Idempotency-Key "1": the database row alone gives up neither the key nor the completion', async () => {
    const gw = await startOn(SECRET);
    try {
      tenant = await gw.newTenant();
      mock.enqueue(upstreamPath('p1'), ok(COMPLETION));
      const first = await chatWithKey(gw.url, tenant, '1');
      expect(first.status, first.text).toBe(200);
      expect(first.body.choices[0].message.content).toBe(COMPLETION);
    } finally {
      await gw.close();
    }

    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    const row = db
      .prepare('SELECT idem_key, response_body FROM idempotency_claims WHERE account_id = ?')
      .get(tenant.account.id) as { idem_key: string; response_body: string };
    db.close();

    const guesses: string[] = [];
    for (let i = 0; i < 1_000; i++) {
      if ((await keyOnly.lookupId(tenant.account.id, String(i))) === row.idem_key) {
        guesses.push(String(i));
      }
    }
    expect(guesses, 'the lookup id fell to a brute force').toEqual([]);
    await expect(
      keyOnly.open(tenant.account.id, '1', row.response_body),
      'the body opened with the Idempotency-Key alone',
    ).rejects.toThrow();
  });

  it('a restart with the same secret still replays it; a gateway with another secret cannot', async () => {
    const again = await startOn(SECRET);
    try {
      const replay = await chatWithKey(again.url, tenant, '1');
      expect(replay.status, replay.text).toBe(200);
      expect(replay.headers.get('x-gateway-idempotent-replay')).toBe('true');
      expect(replay.body.choices[0].message.content).toBe(COMPLETION);
    } finally {
      await again.close();
    }

    const other = await startOn('another-server-secret-also-32-characters-long');
    try {
      mock.enqueue(upstreamPath('p1'), ok('a fresh answer'));
      const fresh = await chatWithKey(other.url, tenant, '1');
      expect(fresh.status, fresh.text).toBe(200);
      expect(fresh.headers.get('x-gateway-idempotent-replay')).toBeNull();
      expect(fresh.body.choices[0].message.content).toBe('a fresh answer');
    } finally {
      await other.close();
    }
  });
});
