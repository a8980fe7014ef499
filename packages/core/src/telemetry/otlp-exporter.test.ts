import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fetchHttpClient, type HttpClient } from '../providers/http-client.js';
import type { ExportTraceServiceRequest } from './encode-otlp-json.js';
import type { GatewayLogger } from './gateway-logger.js';
import { createOtlpExporter, otlpTracesUrl } from './otlp-exporter.js';
import { type ChatSpanInput, chatRequestSpan, chatSpanAttributes, type RequestSpan } from './request-span.js';

interface Received {
  path: string;
  contentType: string | undefined;
  body: string;
}

interface Collector {
  endpoint: string;
  received: Received[];
  /** Requests whose headers arrived (a hanging collector never reads further). */
  arrived: number;
}

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A loopback OTLP collector: `ok` answers 200, `hang` accepts and never answers, or a status. */
async function startCollector(mode: 'ok' | 'hang' | number): Promise<Collector> {
  const collector: Collector = { endpoint: '', received: [], arrived: 0 };
  const server = createServer(async (req: IncomingMessage, res) => {
    collector.arrived += 1;
    if (mode === 'hang') return;
    let body = '';
    for await (const chunk of req) body += chunk;
    collector.received.push({ path: req.url ?? '', contentType: req.headers['content-type'], body });
    res.writeHead(mode === 'ok' ? 200 : mode, { 'content-type': 'application/json' }).end('{}');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  collector.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return collector;
}

/** A port with nothing listening on it: connections are refused. */
async function deadEndpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/** Wraps an HttpClient to count requests in flight at once and aborted signals. */
function countingClient(inner: HttpClient) {
  const counts = { active: 0, maxActive: 0, started: 0, aborted: 0 };
  const client: HttpClient = {
    async request(url, init) {
      counts.started += 1;
      counts.active += 1;
      counts.maxActive = Math.max(counts.maxActive, counts.active);
      init.signal?.addEventListener('abort', () => {
        counts.aborted += 1;
      });
      try {
        return await inner.request(url, init);
      } finally {
        counts.active -= 1;
      }
    },
  };
  return { client, counts };
}

function recordingLogger() {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const logger: GatewayLogger = {
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
  };
  return { logger, lines };
}

const CANARY = 'CANARY-7f3e-the-prompt-text';

const chatInput: ChatSpanInput = {
  requestId: 'req_test',
  requestedModel: 'anthropic/claude-sonnet-4',
  servedModel: 'anthropic/claude-sonnet-4',
  provider: 'anthropic',
  inputTokens: 10,
  outputTokens: 5,
  finishReason: 'stop',
  attempts: 1,
  costMicros: 90,
  ttftMs: 120,
  durationMs: 400,
  httpStatus: 200,
  stream: false,
};

function span(i: number): RequestSpan {
  return chatRequestSpan({
    ...chatInput,
    requestId: `req_${i}`,
    startMs: 1_700_000_000_000 + i,
    endMs: 1_700_000_000_400 + i,
  });
}

function spansIn(body: string) {
  const request = JSON.parse(body) as ExportTraceServiceRequest;
  return request.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
}

describe('otlpTracesUrl', () => {
  it.each([
    ['http://collector:4318', 'http://collector:4318/v1/traces'],
    ['http://collector:4318/', 'http://collector:4318/v1/traces'],
    ['https://otel.example.com/otlp//', 'https://otel.example.com/otlp/v1/traces'],
    ['http://collector:4318/v1/traces', 'http://collector:4318/v1/traces'],
    ['http://collector:4318/v1/traces/', 'http://collector:4318/v1/traces'],
  ])('%s posts to %s', (endpoint, url) => {
    expect(otlpTracesUrl(endpoint)).toBe(url);
  });

  it.each(['not a url', 'collector:4318', 'ftp://collector/'])(
    'refuses %s when the exporter is created',
    (endpoint) => {
      expect(() => createOtlpExporter({ endpoint })).toThrow(TypeError);
    },
  );
});

describe('createOtlpExporter against a loopback collector', () => {
  it('posts batches of at most maxBatch spans to /v1/traces as application/json, and flush delivers the rest', async () => {
    const collector = await startCollector('ok');
    const exporter = createOtlpExporter({
      endpoint: `${collector.endpoint}/`,
      maxBatch: 2,
      flushIntervalMs: 60_000,
    });
    for (let i = 0; i < 5; i++) exporter.export(span(i));
    await exporter.flush();

    expect(collector.received.map((r) => r.path)).toEqual(['/v1/traces', '/v1/traces', '/v1/traces']);
    expect(collector.received.every((r) => r.contentType === 'application/json')).toBe(true);
    const batches = collector.received.map((r) => spansIn(r.body));
    expect(batches.map((b) => b.length)).toEqual([2, 2, 1]);
    const requestIds = batches
      .flat()
      .map((s) => s.attributes.find((a) => a.key === 'gateway.request_id')?.value);
    expect(requestIds).toEqual([0, 1, 2, 3, 4].map((i) => ({ stringValue: `req_${i}` })));
    expect(exporter.stats()).toEqual({ queued: 0, dropped: 0, inFlight: 0, sent: 5, failed: 0 });
    await exporter.shutdown();
  });

  it('sends a partial batch on the interval timer without a flush', async () => {
    const collector = await startCollector('ok');
    const exporter = createOtlpExporter({ endpoint: collector.endpoint, flushIntervalMs: 20 });
    exporter.export(span(1));
    await vi.waitFor(() => expect(collector.received).toHaveLength(1));
    expect(spansIn(collector.received[0]!.body)).toHaveLength(1);
    await exporter.shutdown();
  });

  it('sends exactly the attributes given and nothing else from the request', async () => {
    const collector = await startCollector('ok');
    const exporter = createOtlpExporter({
      endpoint: collector.endpoint,
      serviceVersion: '0.1.0',
      flushIntervalMs: 60_000,
    });
    // The canary rides along as fields the span types do not have; it must go nowhere.
    const leaky = {
      ...chatInput,
      prompt: CANARY,
      messages: [{ role: 'user', content: CANARY }],
    } as ChatSpanInput;
    const attributes = chatSpanAttributes(leaky);
    const requestSpan = {
      ...chatRequestSpan({ ...leaky, startMs: 1, endMs: 2 }),
      completion: CANARY,
    } as RequestSpan;
    exporter.export(requestSpan);
    await exporter.flush();

    const [received] = collector.received;
    expect(received!.body).not.toContain(CANARY);
    const [sentSpan] = spansIn(received!.body);
    const given = Object.entries(attributes)
      .filter(([, value]) => value != null)
      .map(([key]) => key);
    expect(sentSpan!.attributes.map((a) => a.key)).toEqual(given);
    await exporter.shutdown();
  });

  it('logs a non-2xx reply by status only and drops the batch', async () => {
    const collector = await startCollector(503);
    const { logger, lines } = recordingLogger();
    const exporter = createOtlpExporter({ endpoint: collector.endpoint, logger, flushIntervalMs: 60_000 });
    exporter.export(span(1));
    await exporter.flush();
    await exporter.flush();

    expect(collector.received).toHaveLength(1);
    expect(lines).toEqual([{ level: 'warn', obj: { status: 503, spans: 1 }, msg: expect.any(String) }]);
    expect(exporter.stats()).toMatchObject({ queued: 0, failed: 1, sent: 0 });
    await exporter.shutdown();
  });

  it('unrefs its interval timer so it never keeps the process alive', async () => {
    const setIntervalSpy = vi.spyOn(globalThis, 'setInterval');
    try {
      const collector = await startCollector('ok');
      const exporter = createOtlpExporter({ endpoint: collector.endpoint, flushIntervalMs: 60_000 });
      exporter.export(span(1));
      const timer = setIntervalSpy.mock.results.at(-1)?.value as NodeJS.Timeout;
      expect(timer.hasRef()).toBe(false);
      await exporter.shutdown();
    } finally {
      setIntervalSpy.mockRestore();
    }
  });
});

describe('createOtlpExporter against a collector that never answers', () => {
  it('enqueues 10,000 spans synchronously, stays bounded, keeps one POST in flight and aborts it', async () => {
    const collector = await startCollector('hang');
    const { client, counts } = countingClient(fetchHttpClient());
    const { logger, lines } = recordingLogger();
    const exporter = createOtlpExporter({
      endpoint: collector.endpoint,
      http: client,
      logger,
      maxQueue: 500,
      maxBatch: 100,
      timeoutMs: 200,
      flushIntervalMs: 60_000,
    });

    let maxQueued = 0;
    for (let i = 0; i < 10_000; i++) {
      // export returns void, not a promise: there is nothing it could have awaited.
      expect(exporter.export(span(i))).toBeUndefined();
      const stats = exporter.stats();
      maxQueued = Math.max(maxQueued, stats.queued);
      // Sending is deferred out of export's call stack, so no POST starts inside the loop.
      expect(stats.inFlight).toBe(0);
    }
    expect(maxQueued).toBe(500);
    expect(exporter.stats()).toMatchObject({ queued: 500, dropped: 9_500, inFlight: 0 });

    await vi.waitFor(() => expect(collector.arrived).toBeGreaterThanOrEqual(1));
    expect(exporter.stats().inFlight).toBe(1);
    expect(exporter.stats().queued).toBeLessThanOrEqual(400);

    // The first POST is aborted at timeoutMs; the next full batch follows, still one at a time.
    await vi.waitFor(() => expect(counts.aborted).toBeGreaterThanOrEqual(1));
    await vi.waitFor(() => expect(counts.started).toBeGreaterThanOrEqual(2));
    expect(lines[0]).toEqual({
      level: 'warn',
      obj: { error: 'AbortError', timedOut: true, spans: 100 },
      msg: expect.any(String),
    });

    await exporter.shutdown();
    expect(counts.maxActive).toBe(1);
    expect(exporter.stats()).toMatchObject({ queued: 0, inFlight: 0, sent: 0 });
    // Drops are reported as one count, not one line per span.
    const dropLines = lines.filter((l) => 'dropped' in l.obj);
    expect(dropLines).toHaveLength(1);
    expect((dropLines[0]!.obj as { dropped: number }).dropped).toBe(exporter.stats().dropped);
    expect(JSON.stringify(lines)).not.toContain('anthropic');
  });

  it('drops spans exported after shutdown without throwing', async () => {
    const collector = await startCollector('hang');
    const exporter = createOtlpExporter({
      endpoint: collector.endpoint,
      timeoutMs: 50,
      logger: recordingLogger().logger,
    });
    await exporter.shutdown();
    expect(() => exporter.export(span(1))).not.toThrow();
    expect(exporter.stats()).toMatchObject({ queued: 0, dropped: 1 });
    expect(collector.arrived).toBe(0);
  });
});

describe('createOtlpExporter against a dead collector', () => {
  it('resolves flush and logs the failure by error name and code only', async () => {
    const { logger, lines } = recordingLogger();
    const exporter = createOtlpExporter({ endpoint: await deadEndpoint(), logger, flushIntervalMs: 60_000 });
    exporter.export(span(1));
    exporter.export(span(2));
    await exporter.flush();
    await exporter.shutdown();

    expect(lines).toEqual([
      {
        level: 'warn',
        obj: { error: 'TypeError', code: 'ECONNREFUSED', timedOut: false, spans: 2 },
        msg: expect.any(String),
      },
    ]);
    const logged = JSON.stringify(lines);
    for (const content of ['req_1', 'claude-sonnet-4', 'anthropic']) expect(logged).not.toContain(content);
    expect(exporter.stats()).toMatchObject({ queued: 0, failed: 2, sent: 0 });
  });
});
