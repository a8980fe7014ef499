import { describe, expect, it } from 'vitest';
import type { RequestRecord, UsageRow } from '../storage/metering-types.js';
import { meteredAccount, requestRecord } from './metering-fixtures.js';
import { rawOne, sqlText, toBoolean, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const DAY_MS = 86_400_000;
/** 2024-03-10T00:00:00Z, and its number of days since the epoch. */
const DAY0 = Date.UTC(2024, 2, 10);
const D0 = DAY0 / DAY_MS;
const HOUR = 3_600_000;

/** A usage row with zeroes where the test does not say otherwise. */
function usage(row: Partial<UsageRow> & Pick<UsageRow, 'day' | 'model' | 'provider'>): UsageRow {
  return {
    requests: 1,
    errors: 0,
    promptTokens: 0,
    completionTokens: 0,
    cachedTokens: 0,
    costMicros: 0,
    savedMicros: 0,
    byokRequests: 0,
    cacheHits: 0,
    ...row,
  };
}

export function requestRecordsCases(ctx: ConformanceContext): void {
  describe('request records', () => {
    it('insertRequestRecord / getRequestRecord - round-trips every field, JSON fields and int8 money included (raw too)', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 0 });
      const project = await ctx.storage.createProject({ accountId: account.id, name: 'search' });
      const record: RequestRecord = requestRecord(account.id, {
        keyId: key.id,
        projectId: project.id,
        endpoint: 'embeddings',
        requestedModel: 'gpt-4o',
        model: 'openai/gpt-4o',
        provider: 'azure',
        status: 'broken_stream',
        httpStatus: 200,
        errorCode: 'upstream_error',
        errorMessage: 'the stream broke',
        stream: true,
        promptTokens: 1_234,
        completionTokens: 567,
        cachedTokens: 89,
        costMicros: 3_000_000_001,
        savedMicros: 42,
        waived: 'zero_completion',
        byok: true,
        cacheHit: true,
        preset: 'fast-cheap',
        ttftMs: 321,
        durationMs: 4_567,
        finishReason: 'length',
        attempts: 3,
        routingFailures: [
          { provider: 'openai', status: 503, reason: 'http_503' },
          { provider: 'openai', status: 503, reason: 'http_503 (try 2)' },
          { provider: 'anthropic', status: null, reason: 'timeout' },
        ],
        attachments: { image: 2, pdf: 1 },
        guardrails: [
          { rule_id: 'grd_1', name: 'cards', category: 'payment_card', stage: 'input' },
          { rule_id: 'grd_2', name: 'no "secrets"', category: 'keyword', stage: 'output' },
        ],
        metadata: { team: 'search', 'user.id': 'u-42', note: 'ünïcødé "quoted" \'single\'' },
        createdAt: 1_700_000_000_123,
      });

      await ctx.storage.insertRequestRecord(record);

      expect(await ctx.storage.getRequestRecord(account.id, record.id)).toEqual(record);
      const row = await rawOne(ctx, `SELECT * FROM request_records WHERE id = ${sqlText(record.id)}`);
      expect(row.endpoint).toBe('embeddings');
      expect(row.waived).toBe('zero_completion');
      expect(row.preset).toBe('fast-cheap');
      expect([toBoolean(row.stream), toBoolean(row.byok), toBoolean(row.cache_hit)]).toEqual([
        true,
        true,
        true,
      ]);
      expect([toNumber(row.cost_micros), toNumber(row.created_at)]).toEqual([
        3_000_000_001, 1_700_000_000_123,
      ]);
      expect(JSON.parse(String(row.routing_failures))).toEqual(record.routingFailures);
      expect(JSON.parse(String(row.attachments))).toEqual(record.attachments);
      expect(JSON.parse(String(row.guardrails))).toEqual(record.guardrails);
      expect(JSON.parse(String(row.metadata))).toEqual(record.metadata);
    });

    it('insertRequestRecord / getRequestRecord - round-trips nulls, false flags and empty JSON fields', async () => {
      const account = await ctx.storage.createAccount({ name: 'a' });
      const record = requestRecord(account.id, {
        model: null,
        provider: null,
        status: 'refused',
        httpStatus: 429,
        errorCode: 'rate_limited',
        promptTokens: 0,
        completionTokens: 0,
        durationMs: null,
        finishReason: null,
        attempts: 0,
      });

      await ctx.storage.insertRequestRecord(record);

      const stored = await ctx.storage.getRequestRecord(account.id, record.id);
      expect(stored).toEqual(record);
      expect(stored).toMatchObject({
        keyId: null,
        waived: null,
        stream: false,
        byok: false,
        preset: null,
        ttftMs: null,
      });
      const row = await rawOne(ctx, `SELECT * FROM request_records WHERE id = ${sqlText(record.id)}`);
      expect([row.routing_failures, row.attachments, row.guardrails, row.metadata]).toEqual([
        '[]',
        '{}',
        '[]',
        '{}',
      ]);
    });

    it("getRequestRecord - is scoped to the account: another account's request id reads as null", async () => {
      const mine = await ctx.storage.createAccount({ name: 'mine' });
      const theirs = await ctx.storage.createAccount({ name: 'theirs' });
      const record = requestRecord(theirs.id);
      await ctx.storage.insertRequestRecord(record);

      expect(await ctx.storage.getRequestRecord(mine.id, record.id)).toBeNull();
      expect(await ctx.storage.getRequestRecord(theirs.id, 'req_missing')).toBeNull();
      expect(await ctx.storage.getRequestRecord(theirs.id, record.id)).toEqual(record);
    });

    it('insertRequestRecord - accepts every request status', async () => {
      const account = await ctx.storage.createAccount({ name: 'statuses' });
      const statuses: RequestRecord['status'][] = [
        'success',
        'error',
        'refused',
        'broken_stream',
        'client_closed',
        'replayed',
        'in_progress',
      ];
      for (const status of statuses) {
        const record = requestRecord(account.id, { status });
        await ctx.storage.insertRequestRecord(record);
        expect((await ctx.storage.getRequestRecord(account.id, record.id))?.status).toBe(status);
      }
    });

    it('insertRequestRecord - rejects a second record with the same id and keeps the first', async () => {
      const account = await ctx.storage.createAccount({ name: 'a' });
      const record = requestRecord(account.id);
      await ctx.storage.insertRequestRecord(record);

      await expect(ctx.storage.insertRequestRecord({ ...record, status: 'error' })).rejects.toThrow();
      expect(await ctx.storage.getRequestRecord(account.id, record.id)).toEqual(record);
    });
  });

  describe('listUsage', () => {
    async function seedUsage() {
      const account = await ctx.storage.createAccount({ name: 'usage' });
      const other = await ctx.storage.createAccount({ name: 'other' });
      const at = (day: number, hours: number) => DAY0 + day * DAY_MS + hours * HOUR;
      const mini = { model: 'openai/gpt-4o-mini', provider: 'openai' };
      const records = [
        requestRecord(account.id, { ...mini, createdAt: at(-1, 23), promptTokens: 7, costMicros: 7 }),
        requestRecord(account.id, {
          ...mini,
          createdAt: at(0, 10),
          promptTokens: 100,
          completionTokens: 50,
          cachedTokens: 10,
          costMicros: 300,
        }),
        requestRecord(account.id, {
          ...mini,
          createdAt: at(0, 11),
          status: 'error',
          httpStatus: 502,
          promptTokens: 100,
          completionTokens: 0,
        }),
        requestRecord(account.id, {
          model: 'anthropic/claude-sonnet-4',
          provider: 'anthropic',
          createdAt: at(0, 12),
          promptTokens: 200,
          completionTokens: 80,
          byok: true,
          waived: 'byok',
          savedMicros: 900,
        }),
        requestRecord(account.id, {
          ...mini,
          provider: 'azure',
          createdAt: at(0, 13),
          cacheHit: true,
          savedMicros: 300,
          waived: 'cache_hit',
        }),
        requestRecord(account.id, {
          ...mini,
          createdAt: at(1, 9),
          promptTokens: 1_000,
          completionTokens: 500,
          costMicros: 3_000_000_000,
        }),
        requestRecord(account.id, {
          model: null,
          provider: null,
          createdAt: at(1, 9.5),
          status: 'refused',
          httpStatus: 429,
          promptTokens: 0,
          completionTokens: 0,
        }),
        requestRecord(other.id, { ...mini, createdAt: at(0, 10), costMicros: 999_999 }),
      ];
      for (const record of records) await ctx.storage.insertRequestRecord(record);
      return account;
    }

    const mini = { model: 'openai/gpt-4o-mini' };
    const day0Rows = [
      usage({
        day: D0,
        model: 'anthropic/claude-sonnet-4',
        provider: 'anthropic',
        promptTokens: 200,
        completionTokens: 80,
        savedMicros: 900,
        byokRequests: 1,
      }),
      usage({
        day: D0,
        ...mini,
        provider: 'azure',
        promptTokens: 10,
        completionTokens: 20,
        savedMicros: 300,
        cacheHits: 1,
      }),
      usage({
        day: D0,
        ...mini,
        provider: 'openai',
        requests: 2,
        errors: 1,
        promptTokens: 200,
        completionTokens: 50,
        cachedTokens: 10,
        costMicros: 300,
      }),
    ];
    const day1Rows = [
      usage({ day: D0 + 1, model: null, provider: null, errors: 1 }),
      usage({
        day: D0 + 1,
        ...mini,
        provider: 'openai',
        promptTokens: 1_000,
        completionTokens: 500,
        costMicros: 3_000_000_000,
      }),
    ];

    it('listUsage - aggregates per UTC day, model and provider: requests, errors, tokens, cost, saved, byok and cache hits', async () => {
      const account = await seedUsage();

      expect(await ctx.storage.listUsage(account.id, DAY0)).toEqual([...day0Rows, ...day1Rows]);
    });

    it('listUsage - counts only records created at or after `since`', async () => {
      const account = await seedUsage();

      expect(await ctx.storage.listUsage(account.id, DAY0 + 12 * HOUR)).toEqual([
        day0Rows[0],
        day0Rows[1],
        ...day1Rows,
      ]);
      expect(await ctx.storage.listUsage(account.id, DAY0 - DAY_MS)).toEqual([
        usage({
          day: D0 - 1,
          ...mini,
          provider: 'openai',
          promptTokens: 7,
          completionTokens: 20,
          costMicros: 7,
        }),
        ...day0Rows,
        ...day1Rows,
      ]);
      expect(await ctx.storage.listUsage(account.id, DAY0 + 2 * DAY_MS)).toEqual([]);
    });
  });
}
