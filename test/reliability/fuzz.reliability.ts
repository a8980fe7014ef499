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
  noReservationLeft,
  nothingChargedForFailures,
  type Violations,
} from './helpers/invariants.js';
import { Timings } from './helpers/load.js';
import { openSqliteDb, type ReliabilityDb } from './helpers/reliability-db.js';
import { seedFor } from './helpers/seed.js';

/**
 * Fuzzing with fast-check against a real `tollgate serve` process (SQLite): arbitrary and
 * near-valid chat bodies, header values (Content-Type, Authorization, Idempotency-Key, HTTP-Referer,
 * X-Title), metadata objects, query strings of /v1/usage and /v1/generation, every route of core's
 * `apiRoutes` with valid and invalid keys, bodies over the 20 MiB cap, malformed JSON, wrong content
 * types, and malformed HTTP on a raw socket. Every answer is JSON with the error envelope and a
 * 4xx (or a 2xx where the input happened to be valid), never a 5xx; the balance moves only when
 * the provider was called; the process stays up.
 */

const SCALE = Number(process.env.RELIABILITY_FUZZ_SCALE ?? 1);
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
const CREDIT_MICROS = 100_000_000;
const PROPERTY_TIME_LIMIT_MS = 40_000;
const MAX_BODY_BYTES = 20 * 1024 * 1024;
const MODELS = ['chaos/duo', 'chaos/solo', 'chaos/exact'];

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
    server = await spawnServe(db.location, writeConfig(dir, chaosConfig(upstream.url)));
  }, 60_000);

  afterAll(async () => {
    timings.print();
    console.info(
      `[reliability] fuzz figures: ${requests} requests, ${upstream.calls.length} reached the provider, ${failedIds.length} refused`,
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
      { bodiless: input.method === 'HEAD' },
    );
    lastStatus = response.status;
    lastRequestId = response.headers.get('x-gateway-request-id');
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
  };
  const chatBody = fc.oneof(
    fc.record(chatFields, { requiredKeys: [] }),
    fc.record(chatFields, { requiredKeys: ['model', 'messages'] }),
  );
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

  it('query strings of /v1/usage and /v1/generation', async () => {
    const value = fc.oneof(
      fc.integer({ min: -5, max: 400 }).map(String),
      fc.string({ maxLength: 40 }),
      fc.constantFrom('', '1e2', '0x10', '7.5', ' 7', 'NaN', 'req_00000000000000000000', '%zz', '%00'),
    );
    const query = fc.array(
      fc.tuple(fc.oneof(fc.constantFrom('days', 'id'), fc.string({ maxLength: 8 })), value, fc.boolean()),
      {
        maxLength: 4,
      },
    );
    await fuzz(
      'query string',
      runs(150),
      fc.tuple(
        fc.constantFrom('/v1/usage', '/v1/generation'),
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
