import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExaMock } from '../helpers/exa-mock.js';
import { LoopbackCollector } from '../helpers/records-collector.js';
import { createTenant } from '../helpers/test-gateway.js';
import { ChaosUpstream } from './helpers/chaos-upstream.js';
import { chaosConfig, type ServeProcess, spawnServe, writeConfig } from './helpers/gateways.js';
import { canariesAbsent, type Violations } from './helpers/invariants.js';
import { type ChatOutcome, sendChat, Timings, tallyBy } from './helpers/load.js';
import { dbKinds, openDb, type ReliabilityDb } from './helpers/reliability-db.js';
import { seedFor } from './helpers/seed.js';

/**
 * Privacy: canary strings in prompts, system prompts, tool definitions, tool arguments, tool results
 * and completions (the provider echoes the prompt canaries back and adds its own) never reach the
 * database (the SQLite file with its WAL, byte for byte; every column of every row on Postgres),
 * the logs (stdout and stderr of a real `tollgate serve` at LOG_LEVEL=debug) or the exported spans
 * (a loopback OTLP collector named in the config), on every path: success, stream, idempotent
 * replay, broken stream, client hang-up, provider 4xx quoting the request, provider 5xx, unreadable
 * replies, a 402 refusal and malformed JSON. The account's own provider key (BYOK, a canary too) and
 * the answers kept in the response cache (with the completion canary) are likewise found nowhere in
 * clear, and no response ever shows the BYOK key.
 */

function canary(kind: string): string {
  return `CANARY${kind}${randomBytes(10).toString('hex')}`;
}

const C = {
  system: canary('SYSTEM'),
  prompt: canary('PROMPT'),
  toolSchema: canary('TOOLSCHEMA'),
  toolArgs: canary('TOOLARGS'),
  toolResult: canary('TOOLRESULT'),
  completion: canary('COMPLETION'),
  replyArgs: canary('REPLYARGS'),
  badJson: canary('BADJSON'),
  byokKey: canary('BYOKKEY'),
  // Matched by the account's guardrails (a regex that names no canary): input, then the reply.
  guardIn: canary('GUARDIN'),
  guardOut: canary('GUARDOUT'),
  // The text of a web-search result (the `web` plugin's backend returns it; it goes to the model).
  searchResult: canary('SEARCHRESULT'),
};
/** The guardrail pattern: matches both guardrail canaries without holding either. */
const GUARD_PATTERN = 'CANARYGUARD(IN|OUT)[0-9a-f]{20}';
const PROMPT_CANARIES = [C.system, C.prompt, C.toolSchema, C.toolArgs, C.toolResult];
const ALL_CANARIES = Object.values(C);

function conversation(model: string, extra: Record<string, unknown> = {}) {
  return {
    model,
    max_tokens: 200,
    messages: [
      { role: 'system', content: `You are the ${C.system} assistant.` },
      { role: 'user', content: `Look up ${C.prompt} please.` },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'lookup', arguments: JSON.stringify({ q: C.toolArgs }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: `Found ${C.toolResult}.` },
      { role: 'user', content: [{ type: 'text', text: `Again: ${C.prompt}` }] },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'lookup',
          description: `Looks things up (${C.toolSchema})`,
          parameters: { type: 'object', properties: { q: { type: 'string', description: C.toolSchema } } },
        },
      },
    ],
    ...extra,
  };
}

for (const variant of dbKinds) {
  if (variant.skip) console.info(`[reliability] privacy on ${variant.kind} is skipped: ${variant.skip}`);
  describe.skipIf(Boolean(variant.skip))(
    `privacy: canaries never reach the database, the logs or the spans [${variant.kind}]${variant.skip ? ` (skipped: ${variant.skip})` : ''}`,
    () => {
      const timings = new Timings(`privacy [${variant.kind}]`);
      let db: ReliabilityDb;
      let upstream: ChaosUpstream;
      let collector: LoopbackCollector;
      let search: ExaMock;
      let server: ServeProcess | undefined;
      let dir = '';
      let output = '';
      let dump: Buffer = Buffer.alloc(0);
      const outcomes: { name: string; o: ChatOutcome }[] = [];

      beforeAll(async () => {
        const seed = seedFor(`privacy [${variant.kind}]`);
        db = await openDb(variant.kind);
        upstream = await new ChaosUpstream({
          seed,
          weights: { ok: 1 },
          // The provider echoes what it was sent, and adds canaries of its own.
          content: (body) => ({
            text:
              (body.x_chaos as { id?: string } | undefined)?.id?.startsWith('guard-out') === true
                ? `Here it is: ${C.guardOut} as asked`
                : `Echo ${C.completion}: you said ${JSON.stringify(body.messages).slice(0, 400)}`,
            toolArgs: JSON.stringify({ q: C.replyArgs, echo: C.prompt }),
            usage: { prompt: 120, completion: 40 },
          }),
          errorMessage: (body) =>
            `Rejected: ${JSON.stringify(body.messages).slice(0, 600)} (${C.completion})`,
        }).start();
        collector = await new LoopbackCollector('answer').start();
        search = await new ExaMock([
          { title: 'Result', url: 'https://example.com/r', text: `Found: ${C.searchResult}.` },
        ]).start();
        dir = mkdtempSync(join(tmpdir(), 'tollgate-privacy-'));
        const base = chaosConfig(upstream.url, { otlp: { endpoint: collector.url, timeout_ms: 2000 } });
        const web = { format: 'web-search', base_url: search.url, api_key: 'sk-search' };
        const config = writeConfig(dir, { ...base, providers: { ...base.providers, web } });
        const rich = await createTenant(db.storage, { creditMicros: 50_000_000, name: 'privacy' });
        const poor = await createTenant(db.storage, { creditMicros: 1, name: 'privacy poor' });
        server = await timings.time('start server', () =>
          spawnServe(db.location, config, { LOG_LEVEL: 'debug' }),
        );
        const url = server.url;
        const manage = async (name: string, method: string, path: string, body?: unknown) => {
          const response = await fetch(`${url}${path}`, {
            method,
            headers: { authorization: `Bearer ${rich.provisioningKey}`, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          outcomes.push({ name, o: { status: response.status, text: await response.text() } as ChatOutcome });
        };
        // The account's own key for c3: every chaos/solo request below goes out with it.
        await manage('byok add', 'POST', '/v1/byok', { provider: 'c3', api_key: C.byokKey, label: 'own' });
        await manage('byok list', 'GET', '/v1/byok');
        for (const stage of ['input', 'output']) {
          const rule = { name: `canary ${stage}`, stage, category: 'regex', pattern: GUARD_PATTERN };
          await manage(`guardrail add ${stage}`, 'POST', '/v1/guardrails', rule);
        }
        const send = async (
          name: string,
          key: string,
          body: unknown,
          options: Parameters<typeof sendChat>[3] = {},
        ) => {
          outcomes.push({ name, o: await sendChat(url, key, body, options) });
        };
        await timings.time('requests on every path', async () => {
          const k = rich.inferenceKey;
          await send('ok', k, conversation('chaos/duo', { x_chaos: { id: 'ok', force: 'ok' } }));
          await send(
            'stream',
            k,
            conversation('chaos/duo', { stream: true, x_chaos: { id: 'stream', force: 'ok' } }),
          );
          const idem = { headers: { 'Idempotency-Key': `privacy-${seed}` } };
          await send(
            'idempotent',
            k,
            conversation('chaos/solo', { x_chaos: { id: 'idem', force: 'ok' } }),
            idem,
          );
          await send(
            'replay',
            k,
            conversation('chaos/solo', { x_chaos: { id: 'idem-again', force: 'ok' } }),
            idem,
          );
          await send(
            'broken stream',
            k,
            conversation('chaos/solo', {
              stream: true,
              x_chaos: { id: 'broken', force: 'break', breakAfter: 4 },
            }),
          );
          await send(
            'hang-up mid-stream',
            k,
            conversation('chaos/solo', { stream: true, x_chaos: { id: 'hangup', force: 'ok' } }),
            {
              abortAfterFirstChunk: true,
            },
          );
          await send(
            'provider 400 quoting the request',
            k,
            conversation('chaos/solo', { x_chaos: { id: 'p400', force: 'bad_request' } }),
          );
          await send(
            'provider 5xx',
            k,
            conversation('chaos/solo', { x_chaos: { id: 'p5xx', force: 'server_error' } }),
          );
          await send(
            'unreadable 200',
            k,
            conversation('chaos/solo', { x_chaos: { id: 'garbage', force: 'garbage' } }),
          );
          await send('402 refusal', poor.inferenceKey, conversation('chaos/duo'));
          await send(
            'byok key rejected',
            k,
            conversation('chaos/solo', { x_chaos: { id: 'rejected', force: 'unauthorized' } }),
          );
          const guardIn = conversation('chaos/duo', { x_chaos: { id: 'guard-in', force: 'ok' } });
          guardIn.messages.push({ role: 'user', content: `And ${C.guardIn}.` });
          await send('guardrail input', k, guardIn);
          await send(
            'guardrail output',
            k,
            conversation('chaos/duo', { x_chaos: { id: 'guard-out', force: 'ok' } }),
          );
          await send(
            'guardrail output stream',
            k,
            conversation('chaos/duo', { stream: true, x_chaos: { id: 'guard-out-stream', force: 'ok' } }),
          );
          const online = { x_chaos: { id: 'web', force: 'ok' } };
          await send('web search', k, conversation('chaos/duo:online', online));
          await send('web search stream', k, conversation('chaos/duo:online', { ...online, stream: true }));
          const cache = { headers: { 'X-Gateway-Cache': 'true' } };
          const cached = { x_chaos: { id: 'cache', force: 'ok' } };
          await send('cache miss', k, conversation('chaos/duo', cached), cache);
          await send('cache hit', k, conversation('chaos/duo', cached), cache);
          await send('cache hit streamed', k, conversation('chaos/duo', { ...cached, stream: true }), cache);
          const raw = await fetch(`${url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
            body: `{"model":"chaos/duo","messages":[{"role":"user","content":"${C.badJson}"}]`,
          });
          outcomes.push({
            name: 'malformed JSON',
            o: { status: raw.status, text: await raw.text() } as ChatOutcome,
          });
        });
        // SIGTERM: the server drains and flushes its span export, then exits.
        await timings.time('stop server (flush spans)', async () => {
          await server!.process.stop('SIGTERM');
        });
        output = server.output();
        dump = await db.dump();
        console.info(
          `[reliability] privacy [${variant.kind}] figures: ${outcomes.length} requests ` +
            `${JSON.stringify(tallyBy(outcomes, ({ name, o }) => `${name}:${o.status}`))}; ` +
            `${upstream.calls.length} upstream calls, ${collector.spans().length} spans, ${output.length} bytes of logs, ${dump.length} bytes of database`,
        );
      }, 120_000);

      afterAll(async () => {
        timings.print();
        await server?.process.stop('SIGKILL');
        await upstream?.stop();
        await collector?.stop();
        await search?.stop();
        await db?.close();
        if (dir) rmSync(dir, { recursive: true, force: true });
      });

      it('the canaries travelled: the provider got every prompt canary, clients got the completion canaries', () => {
        const sent = upstream.calls.map((c) => c.rawBody).join('\n');
        const received = outcomes.map(({ o }) => o.text ?? '').join('\n');
        const violations: Violations = [
          ...PROMPT_CANARIES.filter((c) => !sent.includes(c)).map((c) => `the provider never got ${c}`),
          ...(received.includes(C.completion) ? [] : ['no client received the completion canary']),
          ...(received.includes(C.replyArgs) ? [] : ['no client received the tool-call canary']),
          ...(sent.includes(C.searchResult) ? [] : ['the provider never got the search result canary']),
          ...(search.calls.length === 2 ? [] : [`${search.calls.length} searches instead of 2`]),
        ];
        expect(violations).toEqual([]);
      });

      it('the account key paid c3, and the cache answered: one upstream call for three cached requests, the completion canary served from it', () => {
        const c3 = upstream.calls.filter((c) => c.path.startsWith('/c3/'));
        expect(c3.length).toBeGreaterThan(3);
        expect(c3.every((c) => c.authorization === `Bearer ${C.byokKey}`)).toBe(true);
        expect(upstream.calls.filter((c) => c.marker === 'cache')).toHaveLength(1);
        for (const name of ['cache hit', 'cache hit streamed']) {
          expect(outcomes.find((o) => o.name === name)?.o.text).toContain(C.completion);
        }
      });

      it('no response shows the BYOK key', () => {
        const answers = outcomes.map(({ o }) => o.text ?? '').join('\n');
        expect(canariesAbsent('responses', answers, [C.byokKey])).toEqual([]);
      });

      it('guardrails: the input canary never went upstream, the output canary reached no client, both blocks told', () => {
        const sent = upstream.calls.map((c) => c.rawBody).join('\n');
        const answers = outcomes
          .map(({ o }) => `${o.text ?? ''} ${JSON.stringify(o.body ?? null)}`)
          .join('\n');
        expect(canariesAbsent('upstream requests', sent, [C.guardIn])).toEqual([]);
        expect(canariesAbsent('responses', answers, [C.guardIn, C.guardOut])).toEqual([]);
        expect(upstream.callsFor('guard-out')).toBe(1);
        for (const name of ['guardrail input', 'guardrail output']) {
          expect(outcomes.find((o) => o.name === name)?.o.errorCode).toBe('guardrail_blocked');
        }
        const streamed = outcomes.find((o) => o.name === 'guardrail output stream')?.o;
        expect(streamed).toMatchObject({ sawErrorEvent: true, finishReason: null, done: true });
      });

      it('every path was taken (statuses as expected)', () => {
        const status = Object.fromEntries(outcomes.map(({ name, o }) => [name, o.status]));
        expect(status).toEqual({
          ok: 200,
          stream: 200,
          idempotent: 200,
          replay: 200,
          'broken stream': 200,
          'hang-up mid-stream': 200,
          'provider 400 quoting the request': 400,
          'provider 5xx': 502,
          'unreadable 200': 502,
          '402 refusal': 402,
          'malformed JSON': 400,
          'byok add': 201,
          'byok list': 200,
          'byok key rejected': 402,
          'cache miss': 200,
          'cache hit': 200,
          'cache hit streamed': 200,
          'guardrail add input': 201,
          'guardrail add output': 201,
          'guardrail input': 422,
          'guardrail output': 422,
          'guardrail output stream': 200,
          'web search': 200,
          'web search stream': 200,
        });
      });

      it('the checks look at real data: the database holds the request ids, the logs and spans are not empty', () => {
        const ids = outcomes.flatMap(({ o }) => (o.requestId ? [o.requestId] : []));
        expect(ids.length).toBeGreaterThan(5);
        expect(ids.filter((id) => dump.includes(id)).length).toBeGreaterThan(5);
        expect(output).toMatch(/listening/);
        // One span per inference request (the malformed JSON one included); management calls have none.
        const inference = outcomes.filter(
          ({ name }) => !name.startsWith('byok ') && !name.startsWith('guardrail add'),
        );
        expect(collector.spans().length).toBeGreaterThanOrEqual(inference.length - 1);
      });

      it('no canary in the database files', () => {
        expect(
          canariesAbsent(
            variant.kind === 'sqlite' ? 'SQLite file + WAL' : 'Postgres rows',
            dump,
            ALL_CANARIES,
          ),
        ).toEqual([]);
      });

      it('no canary in the server logs (stdout + stderr at LOG_LEVEL=debug)', () => {
        expect(canariesAbsent('server output', output, ALL_CANARIES)).toEqual([]);
      });

      it('no canary in the exported spans', () => {
        expect(
          canariesAbsent('OTLP exports', collector.exports.map((e) => e.raw).join('\n'), ALL_CANARIES),
        ).toEqual([]);
      });
    },
  );
}
