import type { Gateway, Storage } from '@tollgate/core';
import { requestRecord } from '@tollgate/core/testing';
import { createTestGateway } from '@tollgate/testing';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountApiConfig } from '../helpers/account-api-gateway.js';
import { InstantClock } from '../helpers/instant-clock.js';
import { type OpenedStorage, openSqlite } from '../helpers/storage-variants.js';
import { createTenant, type Tenant } from '../helpers/tenant.js';
import { inputOf } from '../helpers/test-config.js';

/** Records the test adds in bulk (the template record makes one more). */
const BULK = 100_000;
/** Records per page of the export (`EXPORT_PAGE`). */
const PAGE = 500;

/** One storage with a raw SQL door, for a bulk insert the storage API would take minutes over. */
interface BulkVariant {
  name: string;
  open(): Promise<{ opened: OpenedStorage; exec(sql: string): Promise<void>; columns(): Promise<string[]> }>;
}

const variants: BulkVariant[] = [
  {
    name: 'sqlite',
    async open() {
      const opened = await openSqlite();
      return {
        opened,
        async exec(sql) {
          const raw = new BetterSqlite3(opened.path);
          raw.pragma('busy_timeout = 10000');
          try {
            raw.exec(sql);
          } finally {
            raw.close();
          }
        },
        async columns() {
          const raw = new BetterSqlite3(opened.path, { readonly: true });
          try {
            return (raw.pragma('table_info(request_records)') as { name: string }[]).map((c) => c.name);
          } finally {
            raw.close();
          }
        },
      };
    },
  },
  {
    name: 'pglite',
    async open() {
      const { PGlite } = await import('@electric-sql/pglite');
      const { createPgliteStorage } = await import('@tollgate/storage-postgres');
      const pglite = await PGlite.create();
      const storage = await createPgliteStorage({ pglite: pglite as never });
      return {
        opened: { storage, dump: async () => Buffer.alloc(0), dispose: () => pglite.close() },
        async exec(sql) {
          await pglite.exec(sql);
        },
        async columns() {
          const result = await pglite.query<{ column_name: string }>(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'request_records'",
          );
          return result.rows.map((row) => row.column_name);
        },
      };
    },
  },
];

/** The storage with its page reads counted. */
function countingPages(storage: Storage, reads: { count: number }): Storage {
  return new Proxy(storage, {
    get(target, property) {
      if (property === 'listRequestRecordsPage') {
        return (...args: Parameters<Storage['listRequestRecordsPage']>) => {
          reads.count++;
          return target.listRequestRecordsPage(...args);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

for (const variant of variants) {
  describe(`GET /v1/generations/export of ${BULK.toLocaleString('en')} records [${variant.name}]`, () => {
    let opened: OpenedStorage;
    let gateway: Gateway;
    let tenant: Tenant;
    const reads = { count: 0 };
    const createdAt = Date.now() - 60_000;

    beforeAll(async () => {
      const door = await variant.open();
      opened = door.opened;
      tenant = await createTenant(opened.storage);
      const template = requestRecord(tenant.account.id, {
        id: 'req_template',
        metadata: { team: 'bulk, "quoted"' },
        createdAt,
      });
      await opened.storage.insertRequestRecord(template);
      // Copies of the template: 7 per millisecond (so pages cut through same-millisecond rows),
      // each older than the template, with ids that sort as their number.
      const copied = (await door.columns()).filter((c) => c !== 'id' && c !== 'created_at');
      const list = copied.join(', ');
      const pad = variant.name === 'sqlite' ? "printf('%06d', n)" : "lpad(n::text, 6, '0')";
      const select = `SELECT 'req_bulk_' || ${pad}, ${list}, created_at - 1 - (n / 7) FROM request_records`;
      await door.exec(
        variant.name === 'sqlite'
          ? `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ${BULK})
             INSERT INTO request_records (id, ${list}, created_at)
             ${select}, seq WHERE id = 'req_template'`
          : `INSERT INTO request_records (id, ${list}, created_at)
             ${select}, generate_series(1, ${BULK}) AS n WHERE id = 'req_template'`,
      );
      const kit = await createTestGateway(inputOf(accountApiConfig), {
        storage: opened.storage,
        wrapStorage: (storage) => countingPages(storage, reads),
        clock: new InstantClock(),
      });
      ({ gateway } = kit);
    }, 120_000);

    afterAll(async () => {
      await gateway?.close();
      await opened?.storage.close();
      await opened?.dispose();
    });

    it('streams every row once, newest first, reading one page per chunk the client takes', async () => {
      const response = await gateway.fetch(
        new Request('http://gateway.test/v1/generations/export?days=1', {
          headers: { Authorization: `Bearer ${tenant.inferenceKey}` },
        }),
      );
      expect(response.status).toBe(200);
      // Nothing is read before the client asks: the handler only builds the stream.
      expect(reads.count).toBe(0);

      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let pending = '';
      let lines = 0;
      let previousId = '';
      let firstId = '';
      let previous: { group: number; n: number } | undefined;
      let seen = 0;
      let chunks = 0;
      let maxChunk = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks++;
        maxChunk = Math.max(maxChunk, value.length);
        // Pull, no read-ahead: the storage has been asked for at most one page per chunk delivered
        // (plus one being read for the next), so memory holds a page, not the export.
        expect(reads.count).toBeLessThanOrEqual(chunks + 1);
        pending += value;
        const cut = pending.lastIndexOf('\n');
        if (cut < 0) continue;
        const complete = pending.slice(0, cut);
        pending = pending.slice(cut + 1);
        for (const line of complete.split('\n')) {
          lines++;
          if (lines === 1) {
            expect(line.startsWith('request_id,created_at,key_id,')).toBe(true);
            continue;
          }
          const id = line.slice(0, line.indexOf(','));
          if (lines === 2) firstId = id;
          else {
            // Newest first: the template, then the bulk rows by created_at descending (n / 7
            // ascending), then id descending within a millisecond: strictly after the previous.
            const n = Number(id.slice('req_bulk_'.length));
            const group = Math.floor(n / 7);
            if (previous)
              expect(group > previous.group || (group === previous.group && n < previous.n)).toBe(true);
            previous = { group, n };
            seen++;
          }
          previousId = id;
        }
      }
      expect(pending).toBe('');
      expect(lines).toBe(1 + BULK + 1);
      expect(firstId).toBe('req_template');
      expect(seen).toBe(BULK);
      // The oldest millisecond holds the highest numbers; its smallest id comes last.
      expect(previousId).toBe(`req_bulk_${String(Math.floor(BULK / 7) * 7).padStart(6, '0')}`);
      // One storage read per page of 500 (the last one short), and no chunk bigger than a page.
      expect(reads.count).toBe(Math.ceil((BULK + 1) / PAGE));
      expect(maxChunk).toBeLessThan(PAGE * 400);
    }, 120_000);
  });
}
