import type { RequestRecord } from '@tollgate/core';
import { requestRecord } from '@tollgate/core/testing';
import { describe, expect, it } from 'vitest';
import { describeAccountApi } from '../helpers/account-api-gateway.js';
import { expectError } from '../helpers/http.js';
import { csvObjects } from './csv.js';

const DAY_MS = 86_400_000;

const COLUMNS = [
  'request_id',
  'created_at',
  'key_id',
  'model',
  'requested_model',
  'provider',
  'status',
  'http_status',
  'error_code',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'cost_micros',
  'cost_usd',
  'saved_usd',
  'waived',
  'byok',
  'cache_hit',
  'ttft_ms',
  'duration_ms',
  'finish_reason',
  'attempts',
  'guardrails',
  'metadata',
];

describeAccountApi('GET /v1/generations/export', (api) => {
  /** A tenant with three records (and one of another tenant), all stored directly. */
  async function exportFixture() {
    const tenant = await api().newTenant();
    const other = await api().newTenant();
    const now = Date.now();
    // Record ids are global: each fixture gets its own.
    const id = (name: string) => `req_${name}_${tenant.account.id.slice(-8)}`;
    const records: RequestRecord[] = [
      requestRecord(tenant.account.id, {
        id: id('a_oldest'),
        keyId: tenant.inferenceKeyId,
        model: 'acme/fast',
        provider: 'openai',
        promptTokens: 11,
        completionTokens: 22,
        cachedTokens: 3,
        costMicros: 1_500,
        ttftMs: 40,
        durationMs: 90,
        metadata: { note: '=1+1', quote: 'say "hi", then\r\nleave', team: '@ops' },
        guardrails: [{ rule_id: 'grd_1', name: 'cards', category: 'payment_card', stage: 'output' }],
        createdAt: now - 3_000,
      }),
      requestRecord(tenant.account.id, {
        id: id('b_middle'),
        keyId: tenant.inferenceKeyId,
        requestedModel: 'fast',
        model: '-acme/dash',
        provider: '+plus',
        status: 'error',
        httpStatus: 502,
        errorCode: 'upstream_error',
        errorMessage: 'upstream failed',
        promptTokens: 0,
        completionTokens: 0,
        savedMicros: 2_000_000,
        waived: 'zero_completion',
        byok: true,
        cacheHit: true,
        ttftMs: null,
        durationMs: null,
        finishReason: null,
        attempts: 3,
        createdAt: now - 2_000,
      }),
      requestRecord(tenant.account.id, {
        id: id('c_newest'),
        model: null,
        provider: null,
        createdAt: now - 1_000,
      }),
    ];
    for (const record of records) await api().storage.insertRequestRecord(record);
    await api().storage.insertRequestRecord(
      requestRecord(other.account.id, { id: id('z_other'), createdAt: now - 500 }),
    );
    return { tenant, other, records, id };
  }

  it('answers CSV with the header first, one row per record of the account, newest first', async () => {
    const { tenant, id } = await exportFixture();
    const res = await api().call('/v1/generations/export?days=1', { key: tenant.inferenceKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const today = new Date().toISOString().slice(0, 10);
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="tollgate-generations-${today}.csv"`,
    );
    expect(res.text.split('\n')[0]).toBe(COLUMNS.join(','));
    const { header, rows } = csvObjects(res.text);
    expect(header).toEqual(COLUMNS);
    expect(rows.map((r) => r.request_id)).toEqual(['c_newest', 'b_middle', 'a_oldest'].map(id));
  });

  it('writes every column: ISO times, true/false, empty cells for absent values, the model the caller sent, JSON cells', async () => {
    const { tenant, records } = await exportFixture();
    const res = await api().call('/v1/generations/export', { key: tenant.provisioningKey });
    expect(res.status).toBe(200);
    const { rows } = csvObjects(res.text);
    const [newest, middle, oldest] = rows;
    expect(oldest).toEqual({
      request_id: records[0]!.id,
      created_at: new Date(records[0]!.createdAt).toISOString(),
      key_id: tenant.inferenceKeyId,
      model: 'acme/fast',
      requested_model: 'acme/fast',
      provider: 'openai',
      status: 'success',
      http_status: '200',
      error_code: '',
      prompt_tokens: '11',
      completion_tokens: '22',
      cached_tokens: '3',
      cost_micros: '1500',
      cost_usd: '0.0015',
      saved_usd: '0',
      waived: '',
      byok: 'false',
      cache_hit: 'false',
      ttft_ms: '40',
      duration_ms: '90',
      finish_reason: 'stop',
      attempts: '1',
      guardrails: '[{"rule_id":"grd_1","name":"cards","category":"payment_card","stage":"output"}]',
      metadata: '{"note":"=1+1","quote":"say \\"hi\\", then\\r\\nleave","team":"@ops"}',
    });
    expect(middle).toMatchObject({
      model: "'-acme/dash",
      requested_model: 'fast',
      provider: "'+plus",
      status: 'error',
      http_status: '502',
      error_code: 'upstream_error',
      saved_usd: '2',
      waived: 'zero_completion',
      byok: 'true',
      cache_hit: 'true',
      ttft_ms: '',
      duration_ms: '',
      finish_reason: '',
      attempts: '3',
      guardrails: '[]',
      metadata: '{}',
    });
    expect(newest).toMatchObject({ model: '', requested_model: '', provider: '', key_id: '' });
  });

  it('quotes cells per RFC 4180 and prefixes cells that would run as a formula with a quote mark', async () => {
    const tenant = await api().newTenant();
    await api().storage.insertRequestRecord(
      requestRecord(tenant.account.id, {
        id: 'req_injection',
        model: '=HYPERLINK("http://x","y")',
        requestedModel: '@SUM(A1)',
        finishReason: 'a,b',
        metadata: {},
        createdAt: Date.now() - 1_000,
      }),
    );
    const res = await api().call('/v1/generations/export', { key: tenant.inferenceKey });
    const line = res.text.split('\n')[1]!;
    expect(line).toContain(`,"'=HYPERLINK(""http://x"",""y"")",'@SUM(A1),`);
    expect(line).toContain(',"a,b",');
    const { rows } = csvObjects(res.text);
    expect(rows[0]).toMatchObject({
      model: `'=HYPERLINK("http://x","y")`,
      requested_model: "'@SUM(A1)",
      finish_reason: 'a,b',
    });
    // No cell of the export starts with a formula character.
    for (const cell of Object.values(rows[0]!)) expect(cell).not.toMatch(/^[=+\-@]/);
  });

  it('keeps the last N UTC days (today included) and refuses days outside 1–365', async () => {
    const tenant = await api().newTenant();
    const now = Date.now();
    const today = Math.floor(now / DAY_MS) * DAY_MS;
    await api().storage.insertRequestRecord(
      requestRecord(tenant.account.id, { id: 'req_today', createdAt: today }),
    );
    await api().storage.insertRequestRecord(
      requestRecord(tenant.account.id, { id: 'req_yesterday', createdAt: today - 1 }),
    );
    await api().storage.insertRequestRecord(
      requestRecord(tenant.account.id, { id: 'req_40_days', createdAt: today - 40 * DAY_MS }),
    );
    const ids = async (query: string) => {
      const res = await api().call(`/v1/generations/export${query}`, { key: tenant.inferenceKey });
      expect(res.status).toBe(200);
      return csvObjects(res.text).rows.map((r) => r.request_id);
    };
    expect(await ids('?days=1')).toEqual(['req_today']);
    expect(await ids('?days=2')).toEqual(['req_today', 'req_yesterday']);
    expect(await ids('')).toEqual(['req_today', 'req_yesterday']);
    expect(await ids('?days=41')).toEqual(['req_today', 'req_yesterday', 'req_40_days']);
    expect(await ids('?days=365')).toHaveLength(3);
    for (const days of ['0', '366', '-1', '1.5', 'abc', '']) {
      const res = await api().call(`/v1/generations/export?days=${days}`, { key: tenant.inferenceKey });
      expectError(res, 400, 'invalid_request');
    }
  });

  it('an account without records gets the header alone; no key gets 401', async () => {
    const tenant = await api().newTenant();
    const res = await api().call('/v1/generations/export', { key: tenant.inferenceKey });
    expect(res.status).toBe(200);
    expect(res.text).toBe(`${COLUMNS.join(',')}\n`);
    expectError(await api().call('/v1/generations/export'), 401, 'unauthenticated');
  });
});

describe('the export route table', () => {
  it('leaves GET /v1/generation answering as before', async () => {
    const { apiRoutes } = await import('@tollgate/core');
    const paths = apiRoutes.map((route) => route.path);
    expect(paths).toContain('/v1/generations/export');
    expect(paths).toContain('/v1/generation');
    expect(paths).toContain('/v1/ledger');
  });
});
