import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One POST the collector received. */
export interface CollectedExport {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as sent. */
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: an OTLP body is read field by field by the tests.
  body: any;
}

/**
 * A loopback OTLP/HTTP collector. In `answer` mode it replies `200 {"partialSuccess":{}}` to every
 * export; in `hang` mode it reads each request in full and never answers, counting how many
 * requests are open at once (a request stays open until the exporter gives up and closes it).
 */
export class LoopbackCollector {
  readonly exports: CollectedExport[] = [];
  /** Requests received and not yet answered nor closed by the client. */
  open = 0;
  /** The most requests ever open at the same time. */
  maxOpen = 0;
  /** Replies sent (always 0 in `hang` mode). */
  answered = 0;
  /** Connections accepted. */
  connections = 0;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  url = '';

  constructor(private readonly mode: 'answer' | 'hang' = 'answer') {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.open += 1;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      let closed = false;
      const done = () => {
        if (closed) return;
        closed = true;
        this.open -= 1;
      };
      res.on('close', done);
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        raw += chunk;
      });
      req.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          body = undefined;
        }
        this.exports.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, body });
        if (this.mode === 'hang') return;
        this.answered += 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"partialSuccess":{}}');
      });
    });
    this.server.on('connection', (socket) => {
      this.connections += 1;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Every span of every export so far, with its resource and scope. */
  // biome-ignore lint/suspicious/noExplicitAny: OTLP JSON.
  spans(): any[] {
    // biome-ignore lint/suspicious/noExplicitAny: OTLP JSON.
    const out: any[] = [];
    for (const e of this.exports) {
      for (const rs of e.body?.resourceSpans ?? []) {
        for (const ss of rs.scopeSpans ?? []) for (const span of ss.spans ?? []) out.push(span);
      }
    }
    return out;
  }

  /** The span of one request (by its `gateway.request_id` attribute), if it arrived. */
  // biome-ignore lint/suspicious/noExplicitAny: OTLP JSON.
  spanOf(requestId: string): any | undefined {
    return this.spans().find((s) => attributesOf(s)['gateway.request_id'] === requestId);
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** A span's attributes as a plain object: `{key: value}` with the OTLP value unwrapped. */
// biome-ignore lint/suspicious/noExplicitAny: OTLP JSON.
export function attributesOf(span: any): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of span?.attributes ?? []) out[key] = unwrap(value);
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: OTLP JSON.
function unwrap(value: any): unknown {
  if (value == null) return undefined;
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(unwrap);
  return value;
}
