import { randomBytes } from 'node:crypto';
import { createLogger } from '@tollgate/node-server';
import type OpenAI from 'openai';
import { APIError } from 'openai';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { LoopbackCollector } from './helpers/records-collector.js';
import { describeRecords, dumpDatabase, PATHS } from './helpers/records-gateway.js';
import {
  anthropicMessage,
  anthropicStreamEvents,
  openAiCompletion,
  openAiStreamEvents,
  type ReplyContent,
} from './helpers/records-wire.js';
import type { Tenant } from './helpers/test-gateway.js';
import { readFixture } from './helpers/wire-fixtures.js';

/** A string that exists nowhere but in this run's prompts, tool arguments and completions. */
const CANARY = `CANARY-${randomBytes(12).toString('hex')}`;

/** Every kind of content the gateway must never keep: system prompt, user prompt, tool arguments and results, tool schema. */
function conversation(model: string): ChatCompletionCreateParamsBase {
  return {
    model,
    max_tokens: 200,
    messages: [
      { role: 'system', content: `You are the ${CANARY} assistant.` },
      { role: 'user', content: `Find the weather for ${CANARY}.` },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_prev_1',
            type: 'function',
            function: { name: 'get_weather', arguments: JSON.stringify({ city: `${CANARY}-earlier` }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_prev_1', content: `Result for ${CANARY}: sunny` },
      { role: 'user', content: [{ type: 'text', text: `And now ${CANARY} again, please.` }] },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: `Weather lookup (${CANARY})`,
          parameters: {
            type: 'object',
            properties: { city: { type: 'string', description: `a city such as ${CANARY}` } },
            required: ['city'],
          },
        },
      },
    ],
  };
}

/** What the mock provider answers: text and tool arguments both carry the canary. */
const REPLY: ReplyContent = {
  text: `Sure, ${CANARY} is sunny.`,
  toolCall: {
    id: 'call_reply_1',
    name: 'get_weather',
    arguments: JSON.stringify({ city: `${CANARY}-reply` }),
  },
  usage: { prompt: 321, completion: 45 },
};

const logLines: string[] = [];
const logger = createLogger({ LOG_LEVEL: 'trace' }, { write: (line: string) => logLines.push(line) });
let collector: LoopbackCollector;

beforeAll(async () => {
  collector = await new LoopbackCollector('answer').start();
});
afterAll(async () => {
  await collector?.stop();
});

describeRecords(
  'privacy: prompts, completions and tool arguments are never stored, logged or exported',
  (gw) => {
    let tenant: Tenant;
    let poor: Tenant;
    let client: OpenAI;
    const requestIds: string[] = [];
    const note = (id: string | null | undefined) => {
      if (id && !requestIds.includes(id)) requestIds.push(id);
    };

    /** A request whose completion must come back with the canary (proof the canary travelled). */
    async function served(model: string, stream: boolean): Promise<void> {
      if (stream) {
        const { data, response } = await client.chat.completions
          .create({ ...conversation(model), stream: true })
          .withResponse();
        let text = '';
        let args = '';
        for await (const chunk of data) {
          text += chunk.choices[0]?.delta?.content ?? '';
          args += chunk.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '';
        }
        expect(text).toBe(REPLY.text);
        expect(JSON.parse(args)).toEqual({ city: `${CANARY}-reply` });
        note(response.headers.get('x-gateway-request-id'));
        return;
      }
      const { data, response } = await client.chat.completions
        .create({ ...conversation(model), stream: false })
        .withResponse();
      expect(data.choices[0]?.message.content).toBe(REPLY.text);
      const toolCall = data.choices[0]?.message.tool_calls?.[0];
      expect(toolCall?.type).toBe('function');
      expect(JSON.parse(toolCall?.type === 'function' ? toolCall.function.arguments : '')).toEqual({
        city: `${CANARY}-reply`,
      });
      note(response.headers.get('x-gateway-request-id'));
    }

    /** A request that fails (before or after the stream started); its request id is kept. */
    async function failing(model: string, stream: boolean, key = tenant.inferenceKey, releaseAt?: string) {
      const c = key === tenant.inferenceKey ? client : gw().client(key);
      try {
        if (stream) {
          const { data, response } = await c.chat.completions
            .create({ ...conversation(model), stream: true })
            .withResponse();
          note(response.headers.get('x-gateway-request-id'));
          let text = '';
          for await (const chunk of data) {
            text += chunk.choices[0]?.delta?.content ?? '';
            if (releaseAt && text.endsWith(releaseAt)) gw().mock.release();
          }
        } else {
          await c.chat.completions.create({ ...conversation(model), stream: false });
        }
      } catch (error) {
        if (!(error instanceof APIError)) throw error;
        note(error.headers?.get('x-gateway-request-id'));
        return error;
      }
      throw new Error('expected a failure');
    }

    beforeAll(async () => {
      const gateway = gw();
      const up = gateway.mock;
      tenant = await gateway.newTenant({ name: 'privacy' });
      client = gateway.client(tenant.inferenceKey);

      // Served, both formats, streaming and not.
      up.enqueue(PATHS.oa, { kind: 'json', body: openAiCompletion(REPLY) });
      await served('acme/chat', false);
      up.enqueue(PATHS.oa, { kind: 'sse', events: openAiStreamEvents(REPLY) });
      await served('acme/chat', true);
      up.enqueue(PATHS.an, { kind: 'json', body: anthropicMessage(REPLY) });
      await served('claude/sonnet', false);
      up.enqueue(PATHS.an, { kind: 'sse', events: anthropicStreamEvents(REPLY) });
      await served('claude/sonnet', true);

      // With an Idempotency-Key the response body is kept for replay: it must be sealed, not plain.
      const idempotencyKey = `privacy-${randomBytes(8).toString('hex')}`;
      up.enqueue(PATHS.oa, { kind: 'json', body: openAiCompletion(REPLY) });
      for (let i = 0; i < 2; i++) {
        const { data, response } = await client.chat.completions
          .create(
            { ...conversation('acme/chat'), stream: false },
            { headers: { 'Idempotency-Key': idempotencyKey } },
          )
          .withResponse();
        expect(data.choices[0]?.message.content).toBe(REPLY.text);
        expect(response.headers.get('x-gateway-idempotent-replay')).toBe(i === 0 ? null : 'true');
        note(response.headers.get('x-gateway-request-id'));
      }

      // Upstream 400s whose messages do not contain the canary.
      up.enqueue(PATHS.oa, {
        kind: 'raw',
        status: 400,
        body: readFixture('openai-error-400-unsupported-parameter.json'),
      });
      expect((await failing('acme/chat', false)).status).toBe(400);
      up.enqueue(PATHS.an, {
        kind: 'raw',
        status: 400,
        body: readFixture('anthropic-error-400-invalid-request.json'),
      });
      expect((await failing('claude/sonnet', true)).status).toBe(400);

      // Mid-stream breaks after the canary text was delivered (held there until the client has it).
      const oaEvents = openAiStreamEvents(REPLY);
      up.enqueue(PATHS.oa, { kind: 'sse', events: oaEvents, holdAfter: 5, breakAfter: 6 });
      await failing('acme/chat', true, tenant.inferenceKey, REPLY.text);
      const anEvents = anthropicStreamEvents(REPLY);
      up.enqueue(PATHS.an, { kind: 'sse', events: anEvents, holdAfter: 7, breakAfter: 8 });
      await failing('claude/sonnet', true, tenant.inferenceKey, REPLY.text);

      // Unreadable replies that carry the canary: a truncated JSON body (each of the 3 attempts),
      // and a stream event that is not JSON, after text was delivered.
      const truncated = JSON.stringify(openAiCompletion(REPLY)).slice(0, -40);
      expect(truncated).toContain(CANARY);
      up.enqueue(PATHS.oa, ...[1, 2, 3].map(() => ({ kind: 'raw' as const, body: truncated })));
      expect((await failing('acme/chat', false)).status).toBe(502);
      const garbled = anthropicStreamEvents(REPLY);
      garbled.splice(
        7,
        0,
        `event: content_block_delta\ndata: {"type":"content_block_delta","text":"${CANARY}\n\n`,
      );
      up.enqueue(PATHS.an, { kind: 'sse', events: garbled });
      await failing('claude/sonnet', true);

      // Every route failing (retries, network errors), and refusals: unknown model, no credit.
      up.enqueue(
        PATHS.flaky,
        { kind: 'json', status: 503, body: { error: { message: 'busy' } } },
        { kind: 'reset' },
        {
          kind: 'json',
          status: 500,
          body: { error: { message: 'boom' } },
        },
      );
      expect((await failing('acme/flaky', false)).status).toBe(502);
      expect((await failing('nope/missing', false)).status).toBe(404);
      poor = await gateway.newTenant({ name: 'privacy poor', creditMicros: 0 });
      expect((await failing('acme/chat', true, poor.inferenceKey)).status).toBe(402);

      // The canary did travel: upstream saw it in every request it got.
      expect(up.received.length).toBeGreaterThan(8);
      for (const r of up.received) expect(r.rawBody).toContain(CANARY);

      // 15 requests; the replay answers with the original request id.
      expect(requestIds).toHaveLength(14);
      await vi.waitFor(
        () => {
          for (const id of requestIds) expect(collector.spanOf(id), id).toBeDefined();
        },
        { timeout: 10_000, interval: 50 },
      );
    });

    it('every request of the run has its record (so the records were written and then searched)', async () => {
      for (const id of requestIds) {
        const record =
          (await gw().storage.getRequestRecord(tenant.account.id, id)) ??
          (await gw().storage.getRequestRecord(poor.account.id, id));
        expect(record?.id, id).toBe(id);
      }
    });

    it('not in the database (SQLite file, -wal and -shm read as bytes; every Postgres table and column)', async () => {
      const dump = await dumpDatabase(gw());
      // The dump does see the records (ids are there), so its silence about the canary means something.
      expect(dump.includes(requestIds[0]!)).toBe(true);
      expect(dump.includes(CANARY)).toBe(false);
      expect(dump.includes(CANARY.slice('CANARY-'.length))).toBe(false);
    });

    it('not in any log line', () => {
      const logs = logLines.join('\n');
      expect(logs.includes(CANARY.slice('CANARY-'.length))).toBe(false);
    });

    it('not in any exported span body', () => {
      const raw = collector.exports.map((e) => e.raw).join('\n');
      expect(raw).toContain(requestIds[0]!);
      expect(raw.includes(CANARY.slice('CANARY-'.length))).toBe(false);
    });
  },
  () => ({ otlp: { endpoint: collector.url, timeoutMs: 2_000 }, logger }),
);
