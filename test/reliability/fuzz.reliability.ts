import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiRoutes, createApiKey } from '@tollgate/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../helpers/test-gateway.js';
import { ChaosUpstream } from './helpers/chaos-upstream.js';
import { chaosConfig, type ServeProcess, spawnServe, writeConfig } from './helpers/gateways.js';
import {
  balanceMatchesLedger,
  chargesMatchRecords,
  errorEnvelopeOr2xx,
  noClaimLeftInFlight,
  noErrorLogLines,
  noReservationLeft,
  nothingChargedForFailures,
  readRecords,
  type Violations,
} from './helpers/invariants.js';
import { Timings } from './helpers/load.js';
import { openSqliteDb, type ReliabilityDb } from './helpers/reliability-db.js';
import { seedFor } from './helpers/seed.js';

/**
 * Fuzzing with fast-check against a real `tollgate serve` process (SQLite): arbitrary and
 * near-valid chat bodies, header values (Content-Type, Authorization, Idempotency-Key, HTTP-Referer,
 * X-Title), metadata objects, query strings of /v1/usage, /v1/generation(s) and GET
 * /v1/oauth/authorize, every route of core's `apiRoutes` with valid and invalid keys, bodies over
 * the 20 MiB cap, malformed JSON, wrong content types, malformed HTTP on a raw socket, bodies
 * nested thousands of levels deep (in messages, in a tool schema, in a pass-through field) and at
 * the 128-level bound, `n`/`best_of` out of range, and uploads the client abandons mid-body. Every
 * answer is JSON with the error envelope and a 4xx (or a 2xx where the input happened to be
 * valid), never a 5xx; the balance moves only when the provider was called; the process stays up.
 */

const SCALE = Number(process.env.RELIABILITY_FUZZ_SCALE ?? 1);
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
const CREDIT_MICROS = 100_000_000;
const PROPERTY_TIME_LIMIT_MS = 40_000;
const MAX_BODY_BYTES = 20 * 1024 * 1024;
const MODELS = ['chaos/duo', 'chaos/solo', 'chaos/exact'];
/** The deepest nesting of objects and arrays a body may have (core's MAX_JSON_DEPTH, restated). */
const DEPTH_BOUND = 128;
/** Deep enough to overflow a recursive JSON.stringify before the bound existed. */
const DEEP = 5_000;

describe('fuzzing every route: always the envelope and a 4xx (or a 2xx), never a 5xx, nothing charged', () => {
  const timings = new Timings('fuzz');
  let seed = 0;
  let db: ReliabilityDb;
  let upstream: ChaosUpstream;
  let server: ServeProcess;
  let dir = '';
  let accountId = '';
  let inferenceKey = '';
  let provisioningKey = '';
  let sacrificialKeyId = '';
  let requests = 0;
  const failedIds: string[] = [];
  /** The status and request id of the last probe. */
  let lastStatus = 0;
  let lastRequestId: string | null = null;
  let lastText = '';
  /** Deep, invalid and abandoned bodies sent by the bounded checks below, and how they were answered. */
  const boundedFigures = { sent: 0, fiveHundreds: 0, refused: 0, refusedUpstreamCalls: 0, atBound: 0 };

  beforeAll(async () => {
    seed = seedFor('fuzz');
    db = await openSqliteDb();
    upstream = await new ChaosUpstream({ seed, weights: { ok: 1 } }).start();
    dir = mkdtempSync(join(tmpdir(), 'tollgate-fuzz-'));
    const tenant = await createTenant(db.storage, { creditMicros: CREDIT_MICROS, name: 'fuzz' });
    accountId = tenant.account.id;
    inferenceKey = tenant.inferenceKey;
    provisioningKey = tenant.provisioningKey;
    sacrificialKeyId = (
      await createApiKey(db.storage, { accountId, name: 'sacrificial', scope: 'inference', env: 'live' })
    ).key.id;
    // JSON log lines, so the checks below can read each line's level.
    server = await spawnServe(db.location, writeConfig(dir, chaosConfig(upstream.url)), {
      LOG_FORMAT: 'json',
    });
  }, 60_000);

  afterAll(async () => {
    timings.print();
    console.info(
      `[reliability] fuzz figures: ${requests} requests, ${upstream.calls.length} reached the provider, ${failedIds.length} refused; deep/invalid/abandoned bodies: ${boundedFigures.sent} sent, ${boundedFigures.fiveHundreds} answered ≥ 500, ${boundedFigures.refused} that must be refused (${boundedFigures.refusedUpstreamCalls} upstream calls for them), ${boundedFigures.atBound} at or under the depth bound`,
    );
    await server?.process.stop('SIGTERM');
    await upstream?.stop();
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  interface Probe {
    method: string;
    path: string;
    headers?: Record<string, string>;
    body?: BodyInit;
  }

  /** Sends one fuzzed request; returns what is wrong with the answer and with the balance. */
  async function probe(what: string, input: Probe): Promise<Violations> {
    const callsBefore = upstream.calls.length;
    const balanceBefore = (await db.storage.getAccount(accountId))!.balanceMicros;
    let response: Response;
    let text: string;
    requests++;
    try {
      response = await fetch(`${server.url}${input.path}`, {
        method: input.method,
        headers: input.headers,
        body: input.body,
        signal: AbortSignal.timeout(30_000),
        ...(input.body instanceof ReadableStream && { duplex: 'half' }),
      } as RequestInit);
      text = await response.text();
    } catch (error) {
      return [`${what}: no answer (${(error as Error).message}; cause ${String((error as Error).cause)})`];
    }
    const out = errorEnvelopeOr2xx(
      `${what} ${input.method} ${input.path.slice(0, 200)}`,
      { status: response.status, headers: response.headers, text },
      {
        bodiless: input.method === 'HEAD',
        rfc6749: /^\/v1\/oauth\/(token|authorize)([?#]|$)/.test(input.path),
        anthropic: /^\/v1\/messages([/?#]|$)/.test(input.path),
      },
    );
    lastStatus = response.status;
    lastRequestId = response.headers.get('x-gateway-request-id');
    lastText = text;
    if (response.status >= 400) failedIds.push(lastRequestId ?? '');
    if (upstream.calls.length === callsBefore) {
      const balanceAfter = (await db.storage.getAccount(accountId))!.balanceMicros;
      if (balanceAfter !== balanceBefore) {
        out.push(
          `${what}: balance moved ${balanceBefore} → ${balanceAfter} µ$ without a provider call (${response.status})`,
        );
      }
    }
    return out;
  }

  /** Runs a property with a fixed seed, bounded in runs and in time; violations fail the run. */
  async function fuzz<T>(name: string, numRuns: number, arb: fc.Arbitrary<T>, toProbe: (value: T) => Probe) {
    await timings.time(`${name} (${numRuns} runs)`, () =>
      fc.assert(
        fc.asyncProperty(arb, async (value) => {
          const violations = await probe(name, toProbe(value));
          if (violations.length > 0) throw new Error(violations.join('\n'));
        }),
        {
          seed,
          numRuns,
          endOnFailure: true,
          interruptAfterTimeLimit: PROPERTY_TIME_LIMIT_MS,
          markInterruptAsFailure: false,
        },
      ),
    );
  }

  // ── arbitraries ─────────────────────────────────────────────────────────────────────────────

  const json = (depth = 2) => fc.jsonValue({ maxDepth: depth });
  /** Header-safe text: printable ASCII and Latin-1 (what fetch can send), sometimes long. */
  const headerText = fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength: 300,
  });
  const metadata = fc.oneof(
    json(2),
    fc.dictionary(
      fc.oneof(fc.string({ maxLength: 70 }), fc.stringMatching(/^[A-Za-z0-9._:-]{1,64}$/)),
      fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.boolean(), fc.constant(null), json(1)),
      { maxKeys: 20 },
    ),
  );
  const message = fc.oneof(
    fc.record(
      {
        role: fc.oneof(
          fc.constantFrom('user', 'system', 'assistant', 'tool', 'developer'),
          fc.string({ maxLength: 10 }),
          json(1),
        ),
        content: fc.oneof(fc.string({ maxLength: 200 }), fc.constant(null), json(2)),
        tool_calls: json(2),
        tool_call_id: fc.string({ maxLength: 20 }),
      },
      { requiredKeys: ['role'] },
    ),
    json(2),
  );
  const validMessages = fc.array(
    fc.record({ role: fc.constantFrom('user', 'system'), content: fc.string({ maxLength: 200 }) }),
    { minLength: 1, maxLength: 3 },
  );
  const chatFields = {
    model: fc.oneof(
      fc.constantFrom(...MODELS, 'chaos/missing', 'chaos/duo:free', ''),
      fc.string({ maxLength: 40 }),
      json(1),
    ),
    messages: fc.oneof(validMessages, fc.array(message, { maxLength: 4 }), json(2)),
    stream: fc.oneof(fc.boolean(), json(1)),
    max_tokens: fc.oneof(
      fc.integer({ min: -10, max: 3_000_000 }),
      fc.double(),
      fc.string({ maxLength: 5 }),
      fc.constant(null),
    ),
    metadata,
    tools: fc.oneof(fc.array(json(3), { maxLength: 2 }), json(1)),
    tool_choice: json(2),
    models: fc.oneof(
      fc.array(fc.oneof(fc.constantFrom(...MODELS), fc.string({ maxLength: 20 })), { maxLength: 3 }),
      json(1),
    ),
    provider: fc.oneof(
      fc.record(
        { order: json(1), ignore: json(1), allow_fallbacks: json(0), sort: json(0) },
        { requiredKeys: [] },
      ),
      json(1),
    ),
    transforms: json(1),
    route: json(1),
    stream_options: json(1),
    n: choicesValue(),
    best_of: choicesValue(),
  };
  const chatBody = fc.oneof(
    fc.record(chatFields, { requiredKeys: [] }),
    fc.record(chatFields, { requiredKeys: ['model', 'messages'] }),
  );
  /** `n`/`best_of`: whole numbers in and out of 1..128, fractions, strings, null, huge. */
  function choicesValue() {
    return fc.oneof(
      fc.integer({ min: -3, max: 140 }),
      fc.double(),
      fc.constantFrom('3', null, 1e9, 2 ** 53, 128, 129),
    );
  }
  const validChat = fc.record({
    model: fc.constantFrom(...MODELS),
    messages: validMessages,
    max_tokens: fc.integer({ min: 1, max: 200 }),
  });
  const jsonHeaders = (key: string) => ({
    'content-type': 'application/json',
    authorization: `Bearer ${key}`,
  });

  // ── properties ──────────────────────────────────────────────────────────────────────────────

  it('arbitrary JSON bodies on POST /v1/chat/completions', async () => {
    await fuzz('arbitrary JSON body', runs(120), json(4), (value) => ({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: jsonHeaders(inferenceKey),
      body: JSON.stringify(value),
    }));
  });

  it('near-valid chat bodies (every field fuzzed, valid and invalid values mixed)', async () => {
    await fuzz('near-valid chat body', runs(200), chatBody, (value) => ({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: jsonHeaders(inferenceKey),
      body: JSON.stringify(value),
    }));
  });

  it('metadata objects', async () => {
    await fuzz('metadata', runs(100), fc.tuple(validChat, metadata), ([chat, meta]) => ({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: jsonHeaders(inferenceKey),
      body: JSON.stringify({ ...chat, metadata: meta }),
    }));
  });

  it('valid metadata labels are recorded verbatim (numbers and booleans as strings), whatever their names', async () => {
    const label = fc.oneof(
      { arbitrary: fc.stringMatching(/^[A-Za-z0-9._:-]{1,64}$/), weight: 4 },
      {
        arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'),
        weight: 1,
      },
    );
    const value = fc.oneof(
      fc.string({ maxLength: 256 }).filter((v) => !v.includes('\u0000')),
      fc.integer(),
      fc.boolean(),
    );
    const labels = fc.uniqueArray(fc.tuple(label, value), {
      selector: ([k]) => k,
      minLength: 1,
      maxLength: 16,
    });
    await timings.time(`metadata verbatim (${runs(60)} runs)`, () =>
      fc.assert(
        fc.asyncProperty(validChat, labels, async (chat, entries) => {
          // The body is written by hand so that a label named `__proto__` is an own JSON member.
          const metadata = `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
          const body = `${JSON.stringify(chat).slice(0, -1)},"metadata":${metadata}}`;
          const violations = await probe('metadata verbatim', {
            method: 'POST',
            path: '/v1/chat/completions',
            headers: jsonHeaders(inferenceKey),
            body,
          });
          const requestId = lastRequestId;
          const stored = requestId ? await db.storage.getRequestRecord(accountId, requestId) : null;
          const expected = entries.map(([k, v]) => [k, String(v)]).sort(([a], [b]) => (a! < b! ? -1 : 1));
          const got = Object.entries(stored?.metadata ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
          if (lastStatus !== 200) violations.push(`valid labels refused: ${lastStatus} ${metadata}`);
          else if (JSON.stringify(got) !== JSON.stringify(expected)) {
            violations.push(`labels sent ${JSON.stringify(expected)}, recorded ${JSON.stringify(got)}`);
          }
          if (violations.length > 0) throw new Error(violations.join('\n'));
        }),
        {
          seed,
          numRuns: runs(60),
          endOnFailure: true,
          interruptAfterTimeLimit: PROPERTY_TIME_LIMIT_MS,
          markInterruptAsFailure: false,
        },
      ),
    );
  });

  it('header values: Content-Type, Authorization, Idempotency-Key, HTTP-Referer, X-Title', async () => {
    const authorization = fc.oneof(
      fc.constant(`Bearer ${'$INFERENCE'}`),
      fc.constant(`Bearer ${'$PROVISIONING'}`),
      fc.constantFrom(
        'Bearer gw_live_000000000000000000000000',
        'Bearer gw_test_x',
        'Basic dXNlcjpwYXNz',
        'Bearer',
        '',
      ),
      headerText.map((s) => `Bearer ${s}`),
      headerText,
      fc.constant('bearer \t$INFERENCE  '),
    );
    const headers = fc.record(
      {
        'content-type': fc.oneof(
          fc.constantFrom(
            'application/json',
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/json; charset=latin1',
          ),
          headerText,
        ),
        authorization,
        'idempotency-key': fc.oneof(headerText, fc.string({ minLength: 250, maxLength: 260 })),
        'http-referer': headerText,
        'x-title': headerText,
      },
      { requiredKeys: [] },
    );
    await fuzz('headers', runs(150), fc.tuple(validChat, headers), ([chat, h]) => {
      const resolved = Object.fromEntries(
        Object.entries(h).map(([k, v]) => [
          k,
          String(v).replace('$INFERENCE', inferenceKey).replace('$PROVISIONING', provisioningKey),
        ]),
      );
      return { method: 'POST', path: '/v1/chat/completions', headers: resolved, body: JSON.stringify(chat) };
    });
  });

  it('query strings of /v1/usage, /v1/generation, /v1/generations and GET /v1/oauth/authorize', async () => {
    const value = fc.oneof(
      fc.integer({ min: -5, max: 400 }).map(String),
      fc.string({ maxLength: 40 }),
      fc.constantFrom(
        '',
        '1e2',
        '0x10',
        '7.5',
        ' 7',
        'NaN',
        'req_00000000000000000000',
        '%zz',
        '%00',
        'error',
        'team=red',
        '=x',
        'a=%00',
        'https://example.test/cb',
      ),
    );
    const names = [
      'days',
      'id',
      'limit',
      'after',
      'model',
      'status',
      'key_id',
      'label',
      'client_id',
      'redirect_uri',
    ];
    const query = fc.array(
      fc.tuple(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 8 })), value, fc.boolean()),
      {
        maxLength: 4,
      },
    );
    await fuzz(
      'query string',
      runs(150),
      fc.tuple(
        fc.constantFrom('/v1/usage', '/v1/generation', '/v1/generations', '/v1/oauth/authorize'),
        query,
        fc.constantFrom('inference', 'provisioning', 'invalid', 'none'),
      ),
      ([path, pairs, who]) => {
        const qs = pairs
          .map(([k, v, encode]) =>
            (encode ? `${encodeURIComponent(k)}=${encodeURIComponent(v)}` : `${k}=${v}`).replace(
              /[#\s]/g,
              '',
            ),
          )
          .join('&');
        return { method: 'GET', path: `${path}${qs ? `?${qs}` : ''}`, headers: authFor(who) };
      },
    );
  });

  it("every route of core's apiRoutes, with valid and invalid keys, fuzzed params and bodies", async () => {
    const routes = apiRoutes.map((r) => ({ method: r.method, path: r.path }));
    const param = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom('$SACRIFICIAL', 'key_0000', 'req_0000', 'chaos', '..', '%2F'),
    );
    await fuzz(
      'route',
      runs(200),
      fc.tuple(
        fc.constantFrom(...routes),
        fc.array(param, { minLength: 3, maxLength: 3 }),
        fc.constantFrom('inference', 'provisioning', 'invalid', 'none', 'malformed'),
        fc.option(json(3), { nil: undefined }),
        fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS', 'HEAD'),
        fc.boolean(),
      ),
      ([route, params, who, body, otherMethod, useOther]) => {
        let i = 0;
        const path = route.path.replace(/\{[^}]+\}/g, () => {
          const p = params[i++]!.replace('$SACRIFICIAL', sacrificialKeyId);
          return p === '%2F' ? p : encodeURIComponent(p);
        });
        const method = useOther ? otherMethod : route.method;
        const canHaveBody = method !== 'GET' && method !== 'HEAD';
        return {
          method,
          path,
          headers: {
            ...authFor(who),
            ...(canHaveBody && body !== undefined && { 'content-type': 'application/json' }),
          },
          ...(canHaveBody && body !== undefined && { body: JSON.stringify(body) }),
        };
      },
    );
  });

  it('malformed JSON and empty bodies', async () => {
    const malformed = fc.oneof(
      fc.string({ maxLength: 200 }),
      json(3).map((v) => {
        const text = JSON.stringify(v);
        return text.slice(0, Math.max(0, text.length - 1));
      }),
      fc.constantFrom(
        '',
        ' ',
        '{',
        '{"model":',
        '[',
        'null',
        '"x"',
        '{"model":"chaos/duo","messages":[{"role":"user","content":"hi"}]',
        '\u0000',
        '\ufeff{}',
      ),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
    );
    await fuzz(
      'malformed JSON',
      runs(100),
      fc.tuple(malformed, fc.constantFrom('/v1/chat/completions', '/v1/keys')),
      ([text, path]) => ({
        method: 'POST',
        path,
        headers: jsonHeaders(path === '/v1/keys' ? provisioningKey : inferenceKey),
        body: text,
      }),
    );
  });

  it('wrong content types and non-JSON encodings', async () => {
    await fuzz(
      'content type',
      runs(60),
      fc.tuple(
        validChat,
        fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=zz',
          'application/xml',
          'image/png',
          '',
        ),
        fc.constantFrom('json', 'form', 'xml', 'utf16'),
      ),
      ([chat, type, encoding]) => {
        const body =
          encoding === 'json'
            ? JSON.stringify(chat)
            : encoding === 'form'
              ? new URLSearchParams({ model: chat.model, messages: JSON.stringify(chat.messages) }).toString()
              : encoding === 'xml'
                ? `<chat><model>${chat.model}</model></chat>`
                : Buffer.from(`\ufeff${JSON.stringify(chat)}`, 'utf16le');
        return {
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { authorization: `Bearer ${inferenceKey}`, ...(type && { 'content-type': type }) },
          body,
        };
      },
    );
  });

  it('huge bodies over the 20 MiB cap, with and without Content-Length → 413', async () => {
    await fuzz(
      'huge body',
      runs(4),
      fc.tuple(fc.integer({ min: MAX_BODY_BYTES + 1, max: MAX_BODY_BYTES + 2 * 1024 * 1024 }), fc.boolean()),
      ([size, chunked]) => {
        const filler = Buffer.alloc(size - 64, 'a');
        const head = Buffer.from('{"model":"chaos/duo","messages":[{"role":"user","content":"');
        const tail = Buffer.from('"}]}');
        const whole = Buffer.concat([head, filler, tail]);
        const body = chunked
          ? new ReadableStream<Uint8Array>({
              start(controller) {
                for (let at = 0; at < whole.length; at += 1024 * 1024)
                  controller.enqueue(whole.subarray(at, at + 1024 * 1024));
                controller.close();
              },
            })
          : whole;
        return { method: 'POST', path: '/v1/chat/completions', headers: jsonHeaders(inferenceKey), body };
      },
    );
  });

  it('malformed HTTP on a raw socket: an envelope with a 4xx, or a closed connection, never a 5xx', async () => {
    const garbage = fc.oneof(
      fc.string({ maxLength: 200 }).map((s) => `${s}\r\n\r\n`),
      fc
        .string({ maxLength: 60 })
        .map((s) => `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n${s}\r\n\r\n`),
      fc.constantFrom(
        'GET / HTTP/9.9\r\n\r\n',
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello',
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
        `GET /v1/key HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        'GET /v1/key HTTP/1.1\r\nHost: x\r\nBad Header: yes\r\n\r\n',
      ),
    );
    await timings.time(`raw socket (${runs(40)} runs)`, () =>
      fc.assert(
        fc.asyncProperty(garbage, async (raw) => {
          requests++;
          const answer = await rawExchange(server.url, raw);
          const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 0);
          if (answer === '') return;
          if (status >= 500 || status === 0)
            throw new Error(`raw ${JSON.stringify(raw.slice(0, 120))} → ${answer.slice(0, 300)}`);
          if (status >= 400) {
            const { headers, body } = parseRawResponse(answer);
            const violations = errorEnvelopeOr2xx(`raw ${JSON.stringify(raw.slice(0, 80))}`, {
              status,
              headers,
              text: body,
            });
            if (violations.length > 0) throw new Error(violations.join('\n'));
          }
        }),
        {
          seed,
          numRuns: runs(40),
          endOnFailure: true,
          interruptAfterTimeLimit: PROPERTY_TIME_LIMIT_MS,
          markInterruptAsFailure: false,
        },
      ),
    );
  });

  // ── bounded checks: deep bodies, n/best_of, abandoned uploads ──────────────────────────────────

  /** Where a nested value sits in a chat body, and how many levels of the body enclose it. */
  const places = [
    {
      name: 'messages[0].content',
      enclosing: 3,
      body: (x: string) =>
        `{"model":"chaos/exact","max_tokens":10,"messages":[{"role":"user","content":${x}}]}`,
    },
    {
      name: 'tools[0].function.parameters',
      enclosing: 4,
      body: (x: string) =>
        `{"model":"chaos/exact","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${x}}}]}`,
    },
    {
      name: 'response_format (pass-through)',
      enclosing: 1,
      body: (x: string) =>
        `{"model":"chaos/exact","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"response_format":${x}}`,
    },
  ];
  const nestings = {
    arrays: (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`,
    objects: (d: number) => `${'{"a":'.repeat(d - 1)}{}${'}'.repeat(d - 1)}`,
  };

  /**
   * Sends one bounded-check body: no 5xx (the probe's checks), plus, when `refused`, a 400
   * invalid_request, no upstream call, and a refusal record costing nothing (read back through
   * `GET /v1/generation?id=<X-Gateway-Request-Id>`); otherwise an answer that is not a depth refusal.
   */
  async function boundedProbe(what: string, body: string, refused: boolean): Promise<Violations> {
    const callsBefore = upstream.calls.length;
    boundedFigures.sent++;
    const violations = await probe(what, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: jsonHeaders(inferenceKey),
      body,
    });
    const calls = upstream.calls.length - callsBefore;
    if (refused) {
      boundedFigures.refused++;
      boundedFigures.refusedUpstreamCalls += calls;
    } else boundedFigures.atBound++;
    if (lastStatus >= 500) boundedFigures.fiveHundreds++;
    let code: string | null = null;
    let message = '';
    try {
      const error = JSON.parse(lastText)?.error;
      code = error?.code ?? null;
      message = String(error?.message ?? '');
    } catch {}
    if (!refused) {
      if (lastStatus >= 400 && /levels deep/.test(message))
        violations.push(`${what}: refused for depth at or under the bound: ${lastStatus} ${message}`);
      return violations;
    }
    if (lastStatus !== 400 || code !== 'invalid_request')
      violations.push(
        `${what}: ${lastStatus} ${code}, expected 400 invalid_request (${lastText.slice(0, 200)})`,
      );
    if (calls !== 0) violations.push(`${what}: ${calls} upstream calls, expected none`);
    const id = lastRequestId;
    const generation = await fetch(`${server.url}/v1/generation?id=${encodeURIComponent(id ?? '')}`, {
      headers: { authorization: `Bearer ${inferenceKey}` },
    });
    const record =
      generation.status === 200 ? ((await generation.json()) as { data: GenerationView }).data : null;
    if (
      record?.status !== 'refused' ||
      record.http_status !== 400 ||
      record.error?.code !== 'invalid_request' ||
      record.cost_micros !== 0
    ) {
      violations.push(
        `${what}: refusal record of ${id}: ${generation.status} ${JSON.stringify(record && { status: record.status, http_status: record.http_status, error: record.error, cost: record.cost_micros })}`,
      );
    }
    return violations;
  }

  it(`bodies nested ${DEEP} levels deep and one past the ${DEPTH_BOUND}-level bound → 400 invalid_request, recorded, never sent upstream; at the bound → not refused for depth`, async () => {
    await timings.time('deep nesting', async () => {
      const violations: Violations = [];
      const seen: string[] = [];
      for (const place of places) {
        for (const [kind, nest] of Object.entries(nestings)) {
          for (const [label, bodyDepth, refused] of [
            [`value ${DEEP} deep`, place.enclosing + DEEP, true],
            [`body ${DEPTH_BOUND + 1} deep`, DEPTH_BOUND + 1, true],
            [`body ${DEPTH_BOUND} deep`, DEPTH_BOUND, false],
          ] as const) {
            const body = place.body(nest(bodyDepth - place.enclosing));
            const what = `${place.name}, ${kind}, ${label}`;
            // The bodies are built by hand; make sure each is exactly as deep as its label says.
            if (depthOf(body) !== bodyDepth) violations.push(`${what}: built ${depthOf(body)} deep`);
            violations.push(...(await boundedProbe(what, body, refused)));
            seen.push(`${what} → ${lastStatus}`);
          }
        }
      }
      console.info(`[reliability] fuzz deep nesting:\n  ${seen.join('\n  ')}`);
      expect(violations).toEqual([]);
    });
  });

  it('nesting at random depths and places: past the bound → 400 invalid_request and no upstream call, never a 5xx', async () => {
    await timings.time(`deep nesting, random (${runs(40)} runs)`, () =>
      fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...places),
          fc.constantFrom(...Object.values(nestings)),
          fc.oneof(fc.integer({ min: 120, max: 140 }), fc.integer({ min: 1, max: 8_000 })),
          async (place, nest, depth) => {
            const bodyDepth = place.enclosing + depth;
            const violations = await boundedProbe(
              `${place.name}, body ${bodyDepth} deep`,
              place.body(nest(depth)),
              bodyDepth > DEPTH_BOUND,
            );
            if (violations.length > 0) throw new Error(violations.join('\n'));
          },
        ),
        {
          seed,
          numRuns: runs(40),
          endOnFailure: true,
          interruptAfterTimeLimit: PROPERTY_TIME_LIMIT_MS,
          markInterruptAsFailure: false,
        },
      ),
    );
  });

  it('n and best_of of 0, -1, 1.5, "3", 129, 1e9 → 400 invalid_request, recorded, never sent upstream', async () => {
    await timings.time('n / best_of', async () => {
      const violations: Violations = [];
      for (const field of ['n', 'best_of']) {
        for (const value of [0, -1, 1.5, '3', 129, 1e9]) {
          const body = JSON.stringify({
            model: 'chaos/exact',
            max_tokens: 10,
            messages: [{ role: 'user', content: 'hi' }],
            [field]: value,
          });
          violations.push(...(await boundedProbe(`${field}: ${JSON.stringify(value)}`, body, true)));
        }
      }
      expect(violations).toEqual([]);
    });
  });

  it('an upload the client abandons mid-body (declared length, and chunked): the server answers the next request, records it client_closed, logs no error', async () => {
    await timings.time('abandoned uploads', async () => {
      // The log is readable: the server's own "listening" line is JSON with a numeric level.
      const violations: Violations = server
        .output()
        .split('\n')
        .some((line) => line.includes('Tollgate listening') && /"level":\d+/.test(line))
        ? []
        : ['the server log has no JSON "listening" line: the error-level check would be blind'];
      const body = JSON.stringify({
        model: 'chaos/exact',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x'.repeat(64 * 1024) }],
      });
      for (const framing of ['content-length', 'chunked'] as const) {
        const logFrom = server.output().length;
        const closedBefore = (await readRecords(db, accountId)).filter((r) => r.status === 'client_closed');
        const callsBefore = upstream.calls.length;
        requests++;
        boundedFigures.sent++;
        boundedFigures.refused++;
        const answer = await abandonUpload(server.url, inferenceKey, body, framing);
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 0);
        if (status >= 500) {
          boundedFigures.fiveHundreds++;
          violations.push(`${framing}: answered ${answer.slice(0, 200)} before the hang-up`);
        }
        // The record is written once the server has noticed the hang-up: wait for it (bounded).
        const deadline = Date.now() + 5_000;
        let closed = closedBefore;
        while (Date.now() < deadline) {
          closed = (await readRecords(db, accountId)).filter((r) => r.status === 'client_closed');
          if (closed.length > closedBefore.length) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const fresh = closed.filter((r) => !closedBefore.some((b) => b.id === r.id));
        if (fresh.length !== 1 || fresh[0]!.costMicros !== 0)
          violations.push(`${framing}: client_closed records written: ${JSON.stringify(fresh)}`);
        // The server still answers: a valid request right after.
        violations.push(
          ...(await probe(`after an abandoned upload (${framing})`, {
            method: 'POST',
            path: '/v1/chat/completions',
            headers: jsonHeaders(inferenceKey),
            body: JSON.stringify({
              model: 'chaos/exact',
              max_tokens: 10,
              messages: [{ role: 'user', content: 'hi' }],
            }),
          })),
        );
        if (lastStatus !== 200) violations.push(`${framing}: the next request was answered ${lastStatus}`);
        const calls = upstream.calls.length - callsBefore - 1;
        boundedFigures.refusedUpstreamCalls += calls;
        if (calls !== 0)
          violations.push(`${framing}: the abandoned upload reached the provider (${calls} calls)`);
        violations.push(...noErrorLogLines(`${framing}: abandoned upload`, server.output().slice(logFrom)));
      }
      expect(violations).toEqual([]);
    });
  });

  it('the server process is still up and healthy', async () => {
    expect(server.process.running).toBe(true);
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
  });

  it('after the fuzzing: nothing charged for refusals, charges ↔ records, balance == Σ ledger, no hold or claim left', async () => {
    expect([
      ...(await nothingChargedForFailures(db, accountId, failedIds.filter(Boolean))),
      ...(await chargesMatchRecords(db, accountId)),
      ...(await balanceMatchesLedger(db, accountId, CREDIT_MICROS)),
      ...(await noReservationLeft(db, accountId, Date.now())),
      ...(await noClaimLeftInFlight(db, accountId)),
    ]).toEqual([]);
  });

  function authFor(who: string): Record<string, string> {
    switch (who) {
      case 'inference':
        return { authorization: `Bearer ${inferenceKey}` };
      case 'provisioning':
        return { authorization: `Bearer ${provisioningKey}` };
      case 'invalid':
        return { authorization: 'Bearer gw_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' };
      case 'malformed':
        return { authorization: 'Token abc' };
      default:
        return {};
    }
  }
});

/** The fields of `GET /v1/generation` these checks read. */
interface GenerationView {
  status: string;
  http_status: number;
  error: { code: string; message: string | null } | null;
  cost_micros: number;
}

/** The deepest nesting of objects and arrays in a JSON text (brackets inside strings skipped). */
function depthOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') deepest = Math.max(deepest, ++depth);
    else if (c === '}' || c === ']') depth--;
  }
  return deepest;
}

/**
 * Starts a chat request on a raw socket with `body`'s full length declared (or chunked), sends
 * the headers and half the body, waits for the server to be reading it, then destroys the socket.
 * Returns whatever the server answered before the hang-up (normally nothing).
 */
function abandonUpload(
  url: string,
  key: string,
  body: string,
  framing: 'content-length' | 'chunked',
): Promise<string> {
  const { hostname, port } = new URL(url);
  const half = body.slice(0, Math.floor(body.length / 2));
  const head = [
    'POST /v1/chat/completions HTTP/1.1',
    `Host: ${hostname}:${port}`,
    `Authorization: Bearer ${key}`,
    'Content-Type: application/json',
    framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    '',
  ].join('\r\n');
  const sent = framing === 'chunked' ? `${Buffer.byteLength(half).toString(16)}\r\n${half}\r\n` : half;
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', () => {});
    socket.write(head + sent, () => {
      setTimeout(() => {
        socket.destroy();
        resolve(answer);
      }, 200);
    });
  });
}

/** Writes `raw` to a fresh connection and returns whatever comes back before it closes (bounded). */
function rawExchange(url: string, raw: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(done, 1_000);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
      // One answer is enough: stop once a complete response (by Content-Length, or the last chunk) is in.
      const length = Number(/content-length: (\d+)/i.exec(answer)?.[1] ?? Number.NaN);
      const bodyAt = answer.indexOf('\r\n\r\n');
      if (bodyAt < 0) return;
      if (Number.isFinite(length) && answer.length >= bodyAt + 4 + length) done();
      if (/transfer-encoding: chunked/i.test(answer.slice(0, bodyAt)) && answer.endsWith('0\r\n\r\n')) done();
    });
    socket.on('error', done);
    socket.on('close', done);
    socket.write(raw, 'latin1');
  });
}

/** Splits a raw HTTP/1.1 response into headers and body, undoing chunked transfer encoding. */
function parseRawResponse(answer: string): { headers: Headers; body: string } {
  const bodyAt = answer.indexOf('\r\n\r\n');
  const head = bodyAt < 0 ? answer : answer.slice(0, bodyAt);
  let body = bodyAt < 0 ? '' : answer.slice(bodyAt + 4);
  const headers = new Headers();
  for (const line of head.split('\r\n').slice(1)) {
    const at = line.indexOf(':');
    if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) {
    let out = '';
    let rest = body;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd < 0) break;
      const size = Number.parseInt(rest.slice(0, lineEnd), 16);
      if (!Number.isFinite(size) || size === 0) break;
      out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      rest = rest.slice(lineEnd + 2 + size + 2);
    }
    body = out;
  }
  return { headers, body: Buffer.from(body, 'latin1').toString('utf8') };
}
