import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer } from './loopback-server.js';

/** One scripted answer of the mock upstream. */
export type MockReply =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'raw'; status?: number; body: string; headers?: Record<string, string> }
  | {
      kind: 'sse';
      /** The events to send, each written separately (a recorded stream split by `sseEventsOf`). */
      events: string[];
      /** Destroy the connection after this many events (a mid-stream break). */
      breakAfter?: number;
      /** Wait between events, in ms (0 = none). */
      gapMs?: number;
      /** Hold the stream open after this many events until `release()` is called. */
      holdAfter?: number;
    }
  | { kind: 'hang' }
  | { kind: 'reset' };

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body. */
  body: Record<string, unknown>;
  rawBody: string;
}

/**
 * A loopback provider for end-to-end tests: answers `POST …/chat/completions` (OpenAI format) and
 * `POST …/messages` (Anthropic) from a per-path queue of scripted replies, replaying recorded wire
 * bytes. Records every request it received, and whether the client went away mid-answer.
 */
export class MockUpstream {
  readonly received: ReceivedRequest[] = [];
  /** How many answers were cut short because the gateway closed the connection. */
  clientAborts = 0;
  private readonly queues = new Map<string, MockReply[]>();
  private readonly defaults = new Map<string, MockReply>();
  private readonly held: (() => void)[] = [];
  private readonly loopback = new LoopbackServer();
  url = '';

  async start(): Promise<this> {
    this.url = await this.loopback.listen((req, res) => void this.handle(req, res));
    return this;
  }

  async stop(): Promise<void> {
    this.release();
    await this.loopback.close();
  }

  /** Drops every connection the mock has open (a provider whose connection breaks). */
  cutConnections(): void {
    this.loopback.destroySockets();
  }

  /** Queues replies for requests whose path ends with `pathSuffix` (e.g. `/chat/completions`). */
  enqueue(pathSuffix: string, ...replies: MockReply[]): void {
    const queue = this.queues.get(pathSuffix) ?? [];
    queue.push(...replies);
    this.queues.set(pathSuffix, queue);
  }

  /** The reply used when the queue of `pathSuffix` is empty. */
  setDefault(pathSuffix: string, reply: MockReply): void {
    this.defaults.set(pathSuffix, reply);
  }

  /** Lets every held stream continue. */
  release(): void {
    for (const go of this.held.splice(0)) go();
  }

  /** Lets the stream held longest continue; the others stay held. */
  releaseOldest(): void {
    this.held.shift()?.();
  }

  /** How many streams are held now. */
  get heldCount(): number {
    return this.held.length;
  }

  reset(): void {
    this.received.length = 0;
    this.queues.clear();
    this.defaults.clear();
    this.clientAborts = 0;
    this.release();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let rawBody = '';
    for await (const chunk of req) rawBody += chunk;
    const path = req.url ?? '/';
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(rawBody);
    } catch {}
    this.received.push({ method: req.method ?? 'GET', path, headers: req.headers, body, rawBody });
    const suffix = [...new Set([...this.queues.keys(), ...this.defaults.keys()])].find((s) =>
      path.endsWith(s),
    );
    const reply = (suffix && this.queues.get(suffix)?.shift()) ?? (suffix && this.defaults.get(suffix));
    if (!reply) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"error":{"message":"no scripted reply"}}');
      return;
    }
    await this.answer(reply, req, res);
  }

  private async answer(reply: MockReply, req: IncomingMessage, res: ServerResponse): Promise<void> {
    switch (reply.kind) {
      case 'json':
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(JSON.stringify(reply.body));
        return;
      case 'raw':
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body);
        return;
      case 'hang':
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'sse': {
        let gone = false;
        res.on('close', () => {
          if (!res.writableFinished) {
            gone = true;
            this.clientAborts++;
          }
        });
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        // A break cuts the connection only after what was written has left, so the bytes before
        // the break really arrive.
        const cut = async () => {
          await new Promise<void>((resolve) => res.write('', () => resolve()));
          await new Promise((resolve) => setTimeout(resolve, 20));
          req.socket.destroy();
        };
        for (let i = 0; i < reply.events.length; i++) {
          if (gone) return;
          if (reply.breakAfter !== undefined && i === reply.breakAfter) {
            await cut();
            return;
          }
          if (reply.holdAfter !== undefined && i === reply.holdAfter) {
            await new Promise<void>((resolve) => this.held.push(resolve));
          }
          if (reply.gapMs) await new Promise((resolve) => setTimeout(resolve, reply.gapMs));
          if (gone) return;
          res.write(reply.events[i]);
        }
        if (reply.breakAfter !== undefined && reply.breakAfter >= reply.events.length) {
          await cut();
          return;
        }
        res.end();
        return;
      }
    }
  }
}
