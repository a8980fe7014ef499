import { APIError } from 'openai';
import { beforeAll, expect, it } from 'vitest';
import { expectError } from './helpers/http.js';
import {
  describeRecords,
  expectedCostMicros,
  getJson,
  PATHS,
  type RecordsGateway,
  shiftableClock,
} from './helpers/records-gateway.js';
import { anthropicMessage, openAiCompletion, recordedOpenAiCompletion } from './helpers/records-wire.js';
import type { Tenant } from './helpers/test-gateway.js';
import { fixtureWireBody, readFixture, sseEventsOf } from './helpers/wire-fixtures.js';

const DAY_MS = 86_400_000;
/** The gateway's "now" during this file: noon UTC, so no request can cross midnight. */
const TODAY = Date.UTC(2030, 0, 15, 12, 0, 0);
const dateOf = (daysAgo: number) => new Date(TODAY - daysAgo * DAY_MS).toISOString().slice(0, 10);

/** What one request made by the test should contribute to the usage figures. */
interface Made {
  daysAgo: number;
  model: string | null;
  provider: string | null;
  prompt: number;
  completion: number;
  cached: number;
  cost: number;
  saved: number;
  error: boolean;
}

function totalsOf(made: readonly Made[]) {
  const sum = (pick: (m: Made) => number) => made.reduce((n, m) => n + pick(m), 0);
  const cost = sum((m) => m.cost);
  const saved = sum((m) => m.saved);
  return {
    requests: made.length,
    errors: made.filter((m) => m.error).length,
    prompt_tokens: sum((m) => m.prompt),
    completion_tokens: sum((m) => m.completion),
    cached_tokens: sum((m) => m.cached),
    cost_micros: cost,
    cost_usd: cost / 1_000_000,
    saved_micros: saved,
    saved_usd: saved / 1_000_000,
    byok_requests: 0,
    cache_hits: 0,
  };
}

function groupedBy(made: readonly Made[], key: 'model' | 'provider') {
  const keys = [...new Set(made.map((m) => m[key]))];
  return keys
    .map((k) => ({ key: k, row: { [key]: k, ...totalsOf(made.filter((m) => m[key] === k)) } }))
    .sort((x, y) => String(x.key).localeCompare(String(y.key)))
    .map(({ row }) => row);
}

// biome-ignore lint/suspicious/noExplicitAny: response rows.
const sortedBy = (rows: any[], key: 'model' | 'provider') =>
  [...rows].sort((x, y) => String(x[key]).localeCompare(String(y[key])));

const clock = shiftableClock();

describeRecords(
  'GET /v1/usage',
  (gw) => {
    let a: Tenant;
    let b: Tenant;
    const made: Made[] = [];
    const usage = (tenant: Tenant, days: string, key = tenant.inferenceKey) =>
      getJson(`${gw().url}/v1/usage?days=${days}`, key);

    /** Moves the gateway's clock to `daysAgo` days before TODAY (same time of day). */
    const onDay = (daysAgo: number) => {
      clock.offsetMs = TODAY - daysAgo * DAY_MS - Date.now();
    };

    /** What a served request on `daysAgo` must count as (`cached` 0 unless given, `saved` 0 unless given). */
    const servedRow = (
      daysAgo: number,
      model: string,
      provider: string,
      usage: { prompt: number; completion: number; cached?: number },
      cost: number,
      saved = 0,
    ): Made => ({ daysAgo, model, provider, ...usage, cached: usage.cached ?? 0, cost, saved, error: false });

    /** Notes a request on `daysAgo` that failed: counted as an error, with no provider, tokens or cost. */
    const erred = (daysAgo: number, model: string) =>
      made.push({
        daysAgo,
        model,
        provider: null,
        prompt: 0,
        completion: 0,
        cached: 0,
        cost: 0,
        saved: 0,
        error: true,
      });

    /**
     * A question as long as the largest prompt the scripted answers report (10,122 tokens): the hold
     * covers what the request is charged (a charge never exceeds its hold).
     */
    const question = 'q '.repeat(20_500);

    async function served(gateway: RecordsGateway, tenant: Tenant, model: string, stream = false) {
      const client = gateway.client(tenant.inferenceKey);
      if (stream) {
        const s = await client.chat.completions.create({
          model,
          stream: true,
          messages: [{ role: 'user', content: question }],
        });
        for await (const _ of s) {
          // drain
        }
        return;
      }
      await client.chat.completions.create({ model, messages: [{ role: 'user', content: question }] });
    }

    async function failed(gateway: RecordsGateway, tenant: Tenant, model: string): Promise<number> {
      try {
        await gateway
          .client(tenant.inferenceKey)
          .chat.completions.create({ model, messages: [{ role: 'user', content: 'q' }] });
      } catch (error) {
        if (error instanceof APIError && error.status !== undefined) return error.status;
        throw error;
      }
      throw new Error('expected a failure');
    }

    /** One non-streaming `acme/chat` request of `tenant`, answered by `oa` with `text` and `usage`. */
    async function servedByOa(tenant: Tenant, text: string, usage: { prompt: number; completion: number }) {
      gw().mock.enqueue(PATHS.oa, { kind: 'json', body: openAiCompletion({ text, usage }) });
      await served(gw(), tenant, 'acme/chat');
    }

    beforeAll(async () => {
      const gateway = gw();
      const up = gateway.mock;
      a = await gateway.newTenant({ name: 'usage a' });
      b = await gateway.newTenant({ name: 'usage b' });

      // ── today ──
      onDay(0);
      up.enqueue(PATHS.oa, { kind: 'json', body: recordedOpenAiCompletion() });
      await served(gateway, a, 'acme/chat');
      made.push(servedRow(0, 'acme/chat', 'oa', { prompt: 10122, completion: 1, cached: 9984 }, 771));

      await servedByOa(a, 'hello', { prompt: 1234, completion: 567 });
      made.push(servedRow(0, 'acme/chat', 'oa', { prompt: 1234, completion: 567 }, 526));

      up.enqueue(PATHS.an, {
        kind: 'sse',
        events: sseEventsOf(fixtureWireBody('anthropic-stream-text-then-tool-use.sse')),
      });
      await served(gateway, a, 'claude/sonnet', true);
      made.push(servedRow(0, 'claude/sonnet', 'an', { prompt: 377, completion: 65 }, 2106));

      // A zero completion: waived, its 150 micros saved.
      await servedByOa(a, '', { prompt: 1000, completion: 0 });
      made.push(servedRow(0, 'acme/chat', 'oa', { prompt: 1000, completion: 0 }, 0, 150));

      // An upstream 400: an error, no provider served it.
      up.enqueue(PATHS.oa, {
        kind: 'raw',
        status: 400,
        body: readFixture('openai-error-400-unsupported-parameter.json'),
      });
      expect(await failed(gateway, a, 'acme/chat')).toBe(400);
      erred(0, 'acme/chat');

      // A refusal: unknown model.
      expect(await failed(gateway, a, 'nope/missing')).toBe(404);
      erred(0, 'nope/missing');

      // ── two days ago ──
      onDay(2);
      await servedByOa(a, 'hi', { prompt: 100, completion: 10 });
      made.push(servedRow(2, 'acme/chat', 'oa', { prompt: 100, completion: 10 }, 21));

      up.enqueue(PATHS.an, {
        kind: 'json',
        body: anthropicMessage({ text: 'x', usage: { prompt: 200, completion: 20, cached: 50 } }),
      });
      await served(gateway, a, 'claude/sonnet');
      made.push(servedRow(2, 'claude/sonnet', 'an', { prompt: 200, completion: 20, cached: 50 }, 765));

      // ── forty days ago: outside 30 days, inside 365 ──
      onDay(40);
      await servedByOa(a, 'old', { prompt: 10, completion: 10 });
      made.push(servedRow(40, 'acme/chat', 'oa', { prompt: 10, completion: 10 }, 8));

      // ── another account, today: must never show in a's usage ──
      onDay(0);
      await servedByOa(b, 'b', { prompt: 5000, completion: 5000 });
    });

    it('the expected costs are the spec arithmetic (summed at full precision, rounded up once)', () => {
      const check = (m: Made, model: 'acme/chat' | 'claude/sonnet') =>
        expect(m.cost, JSON.stringify(m)).toBe(
          expectedCostMicros(model, { prompt: m.prompt, completion: m.completion, cached: m.cached }),
        );
      for (const m of made.filter((x) => !x.error && x.cost > 0))
        check(m, m.model as 'acme/chat' | 'claude/sonnet');
      expect(expectedCostMicros('acme/chat', { prompt: 1000, completion: 0 })).toBe(150);
    });

    it('days outside 1..365 or not an integer are 400 invalid_request', async () => {
      for (const days of ['0', '366', '1.5', 'abc', '-1', '', '1e2', ' 7']) {
        const response = await gw().fetch(`${gw().url}/v1/usage?days=${encodeURIComponent(days)}`, {
          headers: { authorization: `Bearer ${a.inferenceKey}` },
        });
        const text = await response.text();
        expectError(
          { status: response.status, headers: response.headers, body: JSON.parse(text), text },
          400,
          'invalid_request',
        );
      }
    });

    it('days=1: today only, totals and breakdowns match the requests made, to the micro', async () => {
      const { status, body } = await usage(a, '1');
      expect(status).toBe(200);
      const today = made.filter((m) => m.daysAgo === 0);
      const data = body.data;
      expect(data.days).toBe(1);
      expect(data.since).toBe(`${dateOf(0)}T00:00:00.000Z`);
      expect(data.totals).toEqual(totalsOf(today));
      expect(data.totals.cost_micros).toBe(771 + 526 + 2106);
      expect(data.daily).toEqual([{ date: dateOf(0), ...totalsOf(today) }]);
      expect(sortedBy(data.by_model, 'model')).toEqual(groupedBy(today, 'model'));
      expect(sortedBy(data.by_provider, 'provider')).toEqual(groupedBy(today, 'provider'));
      for (const row of [data.totals, ...data.daily, ...data.by_model, ...data.by_provider]) {
        expect(row).toHaveProperty('saved_usd');
        expect(row).toHaveProperty('byok_requests');
        expect(row).toHaveProperty('cache_hits');
      }
    });

    it('days=3: a series of exactly 3 days ending today, with the requests of two days ago on their day', async () => {
      const { status, body } = await usage(a, '3', a.provisioningKey);
      expect(status).toBe(200);
      const within = made.filter((m) => m.daysAgo < 3);
      expect(body.data.daily).toEqual([
        { date: dateOf(2), ...totalsOf(made.filter((m) => m.daysAgo === 2)) },
        { date: dateOf(1), ...totalsOf([]) },
        { date: dateOf(0), ...totalsOf(made.filter((m) => m.daysAgo === 0)) },
      ]);
      expect(body.data.totals).toEqual(totalsOf(within));
      expect(sortedBy(body.data.by_model, 'model')).toEqual(groupedBy(within, 'model'));
      expect(sortedBy(body.data.by_provider, 'provider')).toEqual(groupedBy(within, 'provider'));
    });

    it('days=30 leaves out the request of 40 days ago; days=365 has it, over exactly 365 days', async () => {
      const thirty = (await usage(a, '30')).body.data;
      expect(thirty.daily).toHaveLength(30);
      expect(thirty.totals).toEqual(totalsOf(made.filter((m) => m.daysAgo < 30)));

      const year = await usage(a, '365');
      expect(year.status).toBe(200);
      const data = year.body.data;
      expect(data.days).toBe(365);
      expect(data.daily).toHaveLength(365);
      expect(data.daily[0].date).toBe(dateOf(364));
      expect(data.daily.at(-1).date).toBe(dateOf(0));
      // Consecutive UTC days, oldest first.
      expect(data.daily.map((row: { date: string }) => row.date)).toEqual(
        Array.from({ length: 365 }, (_, i) => dateOf(364 - i)),
      );
      const busy = data.daily
        .filter((row: { requests: number }) => row.requests > 0)
        .map((row: { date: string }) => row.date);
      expect(busy).toEqual([dateOf(40), dateOf(2), dateOf(0)]);
      expect(data.daily.find((row: { date: string }) => row.date === dateOf(40))).toEqual({
        date: dateOf(40),
        ...totalsOf(made.filter((m) => m.daysAgo === 40)),
      });
      expect(data.totals).toEqual(totalsOf(made));
      expect(sortedBy(data.by_model, 'model')).toEqual(groupedBy(made, 'model'));
      expect(sortedBy(data.by_provider, 'provider')).toEqual(groupedBy(made, 'provider'));
    });

    it("usage cost equals the account's ledger charges exactly", async () => {
      const charges = (await gw().storage.listLedgerEntries(a.account.id)).filter((e) => e.kind === 'charge');
      const charged = -charges.reduce((n, e) => n + e.amountMicros, 0);
      expect((await usage(a, '365')).body.data.totals.cost_micros).toBe(charged);
      expect(charges).toHaveLength(made.filter((m) => m.cost > 0).length);
    });

    it('20 concurrent requests: usage, ledger and balance agree to the micro', async () => {
      const gateway = gw();
      onDay(0);
      const c = await gateway.newTenant({ name: 'usage concurrent', creditMicros: 5_000_000 });
      const replies = Array.from({ length: 20 }, (_, i) => ({
        prompt: 1000 + i * 37,
        completion: 10 + i * 13,
      }));
      gateway.mock.enqueue(
        PATHS.oa,
        ...replies.map((u) => ({ kind: 'json' as const, body: openAiCompletion({ text: 'ok', usage: u }) })),
      );
      const client = gateway.client(c.inferenceKey);
      await Promise.all(
        replies.map((_, i) =>
          client.chat.completions.create({
            model: 'acme/chat',
            messages: [{ role: 'user', content: `c${i}` }],
          }),
        ),
      );
      const expectedCost = replies.reduce((n, u) => n + expectedCostMicros('acme/chat', u), 0);
      const data = (await usage(c, '1')).body.data;
      expect(data.totals).toMatchObject({
        requests: 20,
        errors: 0,
        prompt_tokens: replies.reduce((n, u) => n + u.prompt, 0),
        completion_tokens: replies.reduce((n, u) => n + u.completion, 0),
        cost_micros: expectedCost,
      });
      const charges = (await gateway.storage.listLedgerEntries(c.account.id)).filter(
        (e) => e.kind === 'charge',
      );
      expect(charges).toHaveLength(20);
      expect(-charges.reduce((n, e) => n + e.amountMicros, 0)).toBe(expectedCost);
      expect((await gateway.storage.getAccount(c.account.id))!.balanceMicros).toBe(5_000_000 - expectedCost);
      expect(await gateway.storage.listReservations(c.account.id, clock.now())).toEqual([]);
    });

    it("another account's requests never appear, and it sees only its own", async () => {
      const ofB = (await usage(b, '365')).body.data;
      const cost = expectedCostMicros('acme/chat', { prompt: 5000, completion: 5000 });
      expect(ofB.totals).toMatchObject({
        requests: 1,
        prompt_tokens: 5000,
        completion_tokens: 5000,
        cost_micros: cost,
      });
      expect(ofB.by_model).toEqual([{ model: 'acme/chat', ...ofB.totals }]);
      const ofA = (await usage(a, '365')).body.data;
      expect(ofA.totals.requests).toBe(made.length);
      expect(ofA.totals.prompt_tokens).toBe(totalsOf(made).prompt_tokens);
    });
  },
  () => ({ clock, serve: false }),
);
