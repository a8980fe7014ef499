import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chatStreamAnswer,
  describeOnEachInferenceStorage,
  expectRefused,
  type InferenceGateway,
  type Json,
  requestIdOf,
  startInferenceGateway,
} from '../helpers/inference-wire.js';
import { openAiCompletion } from '../helpers/records-wire.js';
import { contentOf, dataChunks, parseSse } from '../helpers/sse.js';
import { openSqlite } from '../helpers/storage-variants.js';
import type { Tenant } from '../helpers/tenant.js';

/*
 * Guardrails on the request path (product.md "Guardrails", spec "Which errors are charged"): an
 * input rule that matches is `422 guardrail_blocked` before the pre-flight, nothing sent upstream,
 * not charged; an output rule that matches the answer is `422 guardrail_blocked`, charged for the
 * tokens; on a stream it ends with `event: error`, the terminal chunk without `finish_reason`,
 * `[DONE]`, charged like a broken stream. The verdict `[{rule_id, name, category, stage}]` is on the
 * record, never the matched text.
 */

const CARD = '4111 1111 1111 1111';
/** The default chat reply costs 12 prompt + 5 completion tokens on `acme/chat` (1 and 2 per M). */
const CHAT_COST = 12 * 1 + 5 * 2;

const chat = (content: string, extra: Json = {}) => ({
  model: 'acme/chat',
  messages: [{ role: 'user', content }],
  ...extra,
});

async function addRule(gw: InferenceGateway, tenant: Tenant, body: Json): Promise<Json> {
  const response = await gw.post('/v1/guardrails', body, tenant.provisioningKey);
  const answer = (await response.json()) as Json;
  expect(response.status, JSON.stringify(answer)).toBe(201);
  return answer;
}

const verdictOf = (rule: Json) => ({
  rule_id: rule.id,
  name: rule.name,
  category: rule.category,
  stage: rule.stage,
});

describeOnEachInferenceStorage('Guardrails on the request path', (gw) => {
  it.each([
    [
      'payment_card',
      undefined,
      `pay with ${CARD.replaceAll(' ', '-')} please`,
      'card 4111 1111 1111 1112 is not Luhn-valid',
    ],
    ['email', undefined, 'mail jane.doe@example.com', 'mail jane at example dot com'],
    ['phone', undefined, 'call +1 (555) 123-4567', 'call extension 4567'],
    ['keyword', 'project falcon', 'status of PROJECT FALCON?', 'status of project falconry?'],
    ['regex', 'ACME-[0-9]{4}', 'ticket ACME-1234', 'ticket ACME-12'],
  ])(
    'input %s - a match is 422 guardrail_blocked: not charged, nothing upstream, the verdict on the record; a near miss is served',
    async (category, pattern, hit, miss) => {
      const tenant = await gw().newTenant();
      const rule = await addRule(gw(), tenant, { name: `no ${category}`, stage: 'input', category, pattern });
      const response = await gw().post('/v1/chat/completions', chat(hit), tenant.inferenceKey);
      const { error, record } = await expectRefused(gw(), tenant, response, {
        status: 422,
        code: 'guardrail_blocked',
        endpoint: 'chat.completions',
      });
      expect(error.message).toContain(`"no ${category}"`);
      expect(error.message).toContain('not charged');
      expect(record.guardrails).toEqual([verdictOf(rule)]);
      expect(JSON.stringify({ error, record })).not.toContain(hit);

      const served = await gw().post('/v1/chat/completions', chat(miss), tenant.inferenceKey);
      expect(served.status, await served.clone().text()).toBe(200);
      expect((await gw().generation(requestIdOf(served), tenant.inferenceKey)).guardrails).toEqual([]);
    },
  );

  it('input - reads every message, text parts included, and embeddings input strings', async () => {
    const tenant = await gw().newTenant();
    await addRule(gw(), tenant, { name: 'cards', stage: 'input', category: 'payment_card' });
    const parts = {
      model: 'acme/chat',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: `number ${CARD}` }] },
      ],
    };
    const blocked = await gw().post('/v1/chat/completions', parts, tenant.inferenceKey);
    expect(blocked.status).toBe(422);
    const embed = await gw().post(
      '/v1/embeddings',
      { model: 'acme/embed', input: ['fine', `card ${CARD}`] },
      tenant.inferenceKey,
    );
    await expectRefused(gw(), tenant, embed, {
      status: 422,
      code: 'guardrail_blocked',
      endpoint: 'embeddings',
    });
  });

  it('output (JSON) - 422 guardrail_blocked, charged for the tokens with a ledger charge, error record with the verdict', async () => {
    const tenant = await gw().newTenant();
    const rule = await addRule(gw(), tenant, {
      name: 'no cards out',
      stage: 'output',
      category: 'payment_card',
    });
    gw().upstream.on(
      'p1',
      openAiCompletion({ text: `Sure: ${CARD}.`, usage: { prompt: 12, completion: 5 } }),
    );
    const response = await gw().post('/v1/chat/completions', chat('card please'), tenant.inferenceKey);
    const body = (await response.json()) as Json;
    expect(response.status, JSON.stringify(body)).toBe(422);
    expect(body.error.code).toBe('guardrail_blocked');
    expect(body.error.message).toContain('"no cards out"');
    expect(body.error.message).toContain('was charged');
    expect(JSON.stringify(body)).not.toContain('4111');
    const requestId = requestIdOf(response);
    expect(await gw().charges(tenant.account.id)).toMatchObject([
      { kind: 'charge', amountMicros: -CHAT_COST, requestId },
    ]);
    expect(await gw().balance(tenant.account.id)).toBe(tenant.account.balanceMicros - CHAT_COST);
    const record = await gw().generation(requestId, tenant.inferenceKey);
    expect(record).toMatchObject({
      status: 'error',
      http_status: 422,
      error: { code: 'guardrail_blocked' },
      cost_micros: CHAT_COST,
      guardrails: [verdictOf(rule)],
    });
    expect(JSON.stringify(record)).not.toContain('4111');
  });

  it('output - a cached answer kept before the rule existed is refused uncharged, never served', async () => {
    const tenant = await gw().newTenant();
    const cache = { 'X-Gateway-Cache': 'true' };
    gw().upstream.on(
      'p1',
      openAiCompletion({ text: `Sure: ${CARD}.`, usage: { prompt: 12, completion: 5 } }),
    );
    const first = await gw().post('/v1/chat/completions', chat('card please'), tenant.inferenceKey, cache);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-gateway-cache')).toBe('MISS');
    const hit = await gw().post('/v1/chat/completions', chat('card please'), tenant.inferenceKey, cache);
    expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
    const calls = gw().upstream.calls.length;
    const charged = await gw().balance(tenant.account.id);

    const rule = await addRule(gw(), tenant, {
      name: 'no cards out',
      stage: 'output',
      category: 'payment_card',
    });
    const blocked = await gw().post('/v1/chat/completions', chat('card please'), tenant.inferenceKey, cache);
    const body = (await blocked.json()) as Json;
    expect(blocked.status, JSON.stringify(body)).toBe(422);
    expect(body.error.code).toBe('guardrail_blocked');
    expect(body.error.message).toContain('not charged');
    expect(JSON.stringify(body)).not.toContain('4111');
    expect(gw().upstream.calls.length).toBe(calls);
    expect(await gw().balance(tenant.account.id)).toBe(charged);
    const record = await gw().generation(requestIdOf(blocked), tenant.inferenceKey);
    expect(record).toMatchObject({ status: 'refused', cost_micros: 0, guardrails: [verdictOf(rule)] });
  });

  it('output (JSON) - tool-call arguments are matched too', async () => {
    const tenant = await gw().newTenant();
    await addRule(gw(), tenant, { name: 'mail', stage: 'output', category: 'email' });
    gw().upstream.on(
      'p1',
      openAiCompletion({
        text: '',
        toolCall: { id: 'call_1', name: 'send', arguments: '{"to":"bob@example.org"}' },
        usage: { prompt: 12, completion: 5 },
      }),
    );
    const response = await gw().post('/v1/chat/completions', chat('mail bob'), tenant.inferenceKey);
    expect(response.status).toBe(422);
  });

  it('output (stream) - a card split across chunks: stops before it, event error, terminal chunk without finish_reason, [DONE], charged', async () => {
    const tenant = await gw().newTenant();
    const rule = await addRule(gw(), tenant, {
      name: 'no cards out',
      stage: 'output',
      category: 'payment_card',
    });
    // Four content deltas of 10 characters: the card ends in the third.
    gw().upstream.on(
      'p1',
      chatStreamAnswer({ text: `Your card: ${CARD} thanks`, usage: { prompt: 12, completion: 9 } }),
    );
    const response = await gw().post(
      '/v1/chat/completions',
      chat('card please', { stream: true }),
      tenant.inferenceKey,
    );
    expect(response.status).toBe(200);
    const events = parseSse(await response.text());
    expect(contentOf(events)).toBe('Your card: 4111 1111');
    const errorEvent = events.find((e) => e.event === 'error');
    const envelope = JSON.parse(errorEvent!.data);
    expect(envelope.error).toMatchObject({ code: 'guardrail_blocked', request_id: requestIdOf(response) });
    expect(envelope.error.message).toContain('"no cards out"');
    const chunks = dataChunks(events);
    const terminal = chunks.at(-1);
    expect(terminal.gateway.cost_micros).toBeGreaterThan(0);
    expect(terminal.choices.every((c: Json) => c.finish_reason == null)).toBe(true);
    expect(events.at(-1)!.data).toBe('[DONE]');
    expect(events.findIndex((e) => e.event === 'error')).toBeLessThan(events.length - 2);

    const requestId = requestIdOf(response);
    const record = await gw().generation(requestId, tenant.inferenceKey);
    expect(record).toMatchObject({
      status: 'broken_stream',
      error: { code: 'guardrail_blocked' },
      finish_reason: null,
      guardrails: [verdictOf(rule)],
    });
    expect(record.cost_micros).toBe(terminal.gateway.cost_micros);
    expect(await gw().charges(tenant.account.id)).toMatchObject([
      { kind: 'charge', amountMicros: -record.cost_micros, requestId },
    ]);
  });

  it('a stream without a match is untouched by an output rule', async () => {
    const tenant = await gw().newTenant();
    await addRule(gw(), tenant, { name: 'no cards out', stage: 'output', category: 'payment_card' });
    const response = await gw().post(
      '/v1/chat/completions',
      chat('hi', { stream: true }),
      tenant.inferenceKey,
    );
    const events = parseSse(await response.text());
    expect(events.some((e) => e.event === 'error')).toBe(false);
    expect(dataChunks(events).at(-1).choices[0].finish_reason).toBe('stop');
  });

  it('a catastrophic regex ((a+)+$) on 50,000 a then ! answers in bounded time', async () => {
    const tenant = await gw().newTenant();
    await addRule(gw(), tenant, { name: 'redos', stage: 'input', category: 'regex', pattern: '(a+)+$' });
    const started = performance.now();
    const response = await gw().post(
      '/v1/chat/completions',
      chat(`${'a'.repeat(50_000)}!`),
      tenant.inferenceKey,
    );
    expect(response.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('Guardrails - a blocked card number lands nowhere in the database [sqlite]', () => {
  let gw: InferenceGateway;
  let dump: () => Promise<Buffer>;
  beforeAll(async () => {
    const opened = await openSqlite();
    dump = () => opened.dump();
    gw = await startInferenceGateway(opened);
  });
  afterAll(() => gw.close());

  it('the canary of an input block and of an output block is not in the SQLite file or its WAL', async () => {
    const inputCanary = '5555 5555 5555 4444';
    const outputCanary = '4000-0566-5566-5556';
    const tenant = await gw.newTenant();
    await addRule(gw, tenant, { name: 'cards in', stage: 'input', category: 'payment_card' });
    await addRule(gw, tenant, { name: 'cards out', stage: 'output', category: 'payment_card' });
    expect(
      (await gw.post('/v1/chat/completions', chat(`x ${inputCanary}`), tenant.inferenceKey)).status,
    ).toBe(422);
    gw.upstream.on(
      'p1',
      openAiCompletion({ text: `here ${outputCanary}`, usage: { prompt: 3, completion: 4 } }),
    );
    expect((await gw.post('/v1/chat/completions', chat('hi'), tenant.inferenceKey)).status).toBe(422);
    const bytes = await dump();
    expect(bytes.length).toBeGreaterThan(0);
    for (const canary of [inputCanary, outputCanary]) {
      for (const form of [canary, canary.replace(/[ -]/g, '')]) {
        expect(bytes.includes(Buffer.from(form))).toBe(false);
      }
    }
  });
});
