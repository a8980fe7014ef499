import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess, cliEnv, serveArgs, serverSecretEnv } from './helpers/cli-process.js';
import { MockUpstream } from './helpers/mock-upstream.js';
import {
  cliJson,
  createScratchDatabase,
  type ScratchDatabase,
  writeTempConfig,
} from './helpers/multi-process-gateway.js';
import { ok } from './helpers/routing-gateway.js';
import { dataChunks, parseSse } from './helpers/sse.js';

const databaseUrl = process.env.TEST_DATABASE_URL;
const SKIP_REASON = 'TEST_DATABASE_URL is not set';
if (!databaseUrl) console.info(`[e2e] rolling-restart is skipped: ${SKIP_REASON}`);

/** The most requests the load sends, whatever happens. */
const MAX_REQUESTS = 3_000;
const CONCURRENCY = 4;
const DRAIN_DELAY_MS = 1_500;
const BALANCER_POLL_MS = 100;

/** A short OpenAI stream: role, ten words, finish, usage, `[DONE]`. */
function streamEvents(): string[] {
  const chunk = (choices: unknown[], usage: unknown = null) =>
    `data: ${JSON.stringify({ id: 's1', object: 'chat.completion.chunk', created: 1, model: 'm-1', choices, usage })}\n\n`;
  const events = [chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])];
  for (let i = 0; i < 10; i++) {
    events.push(chunk([{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }]));
  }
  events.push(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
  events.push(chunk([], { prompt_tokens: 9, completion_tokens: 10, total_tokens: 19 }));
  events.push('data: [DONE]\n\n');
  return events;
}

interface Replica {
  name: string;
  process: CliProcess;
  url: string;
}

/**
 * A load balancer as Kubernetes runs one: it polls every replica's `/readyz` and sends only to those
 * that last answered 200. A replica that answers anything else, or nothing, is out at once.
 */
class Balancer {
  readonly replicas = new Map<string, Replica>();
  readonly ready = new Set<string>();
  private timer: ReturnType<typeof setInterval> | undefined;

  start(): void {
    this.timer = setInterval(() => void this.poll(), BALANCER_POLL_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  add(replica: Replica): void {
    this.replicas.set(replica.name, replica);
  }

  remove(name: string): void {
    this.replicas.delete(name);
    this.ready.delete(name);
  }

  /** A replica in rotation now, picked at random; undefined when none is. */
  pick(): Replica | undefined {
    const names = [...this.ready];
    const name = names[Math.floor(Math.random() * names.length)];
    return name === undefined ? undefined : this.replicas.get(name);
  }

  async poll(): Promise<void> {
    await Promise.all(
      [...this.replicas.values()].map(async (replica) => {
        const healthy = await fetch(`${replica.url}/readyz`, { signal: AbortSignal.timeout(1_000) }).then(
          (response) => response.status === 200,
          () => false,
        );
        if (healthy && this.replicas.has(replica.name)) this.ready.add(replica.name);
        else this.ready.delete(replica.name);
      }),
    );
  }

  /** Resolves once `name` is in rotation (bounded). */
  async untilReady(name: string): Promise<void> {
    for (let i = 0; i < 600 && !this.ready.has(name); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(this.ready.has(name), `${name} never became ready`).toBe(true);
  }
}

interface Sent {
  replica: string;
  stream: boolean;
  status: number | 'network error';
  complete: boolean;
}

describe.skipIf(!databaseUrl)(
  `a rolling restart of two processes on one Postgres${databaseUrl ? '' : ` (skipped: ${SKIP_REASON})`}`,
  () => {
    let db: ScratchDatabase;
    let mock: MockUpstream;
    let config: { path: string; remove(): void };
    let key = '';
    const started: CliProcess[] = [];

    beforeAll(async () => {
      db = await createScratchDatabase(databaseUrl!);
      mock = await new MockUpstream().start();
      mock.setDefault('/rr/v1/chat/completions', ok('steady'));
      mock.setDefault('/rs/v1/chat/completions', { kind: 'sse', events: streamEvents(), gapMs: 20 });
      config = writeTempConfig({
        providers: {
          rr: { format: 'openai', base_url: `${mock.url}/rr/v1`, api_key: 'sk-rr' },
          rs: { format: 'openai', base_url: `${mock.url}/rs/v1`, api_key: 'sk-rs' },
        },
        models: [
          {
            id: 'acme/steady',
            max_output_tokens: 100,
            endpoints: [{ provider: 'rr', upstream_model: 'm-1', pricing: { prompt: '1', completion: '2' } }],
          },
          {
            id: 'acme/streamed',
            max_output_tokens: 100,
            endpoints: [{ provider: 'rs', upstream_model: 'm-1', pricing: { prompt: '1', completion: '2' } }],
          },
        ],
        defaults: { rate_limit_rpm: 1_000_000 },
      });
      const common = ['--db', db.url, '--config', config.path];
      const account = await cliJson([
        'account',
        'create',
        '--name',
        'rolling',
        '--credit-usd',
        '50',
        ...common,
      ]);
      key = (await cliJson(['key', 'create', '--account', account.id!, '--name', 'load', ...common])).key!;
    }, 60_000);

    afterAll(async () => {
      // Exactly the processes this file started, by their handles.
      await Promise.all(started.filter((p) => p.running).map((p) => p.stop('SIGKILL')));
      await mock?.stop();
      config?.remove();
      await db?.drop();
    }, 60_000);

    async function startReplica(name: string): Promise<Replica> {
      const process = new CliProcess(
        [...serveArgs(db.url, config.path, 30_000), '--drain-delay-ms', String(DRAIN_DELAY_MS)],
        cliEnv(serverSecretEnv(db.url)),
      );
      started.push(process);
      const [, url] = await process.waitFor(/Tollgate listening on (http:\/\/[0-9.]+:\d+)/, 'stderr');
      return { name, process, url: url! };
    }

    async function send(replica: Replica, stream: boolean): Promise<Sent> {
      const sent: Sent = { replica: replica.name, stream, status: 'network error', complete: false };
      try {
        const response = await fetch(`${replica.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: stream ? 'acme/streamed' : 'acme/steady',
            stream,
            messages: [{ role: 'user', content: 'hi' }],
          }),
        });
        sent.status = response.status;
        const text = await response.text();
        sent.complete = stream
          ? dataChunks(parseSse(text)).some((c) => c.choices?.[0]?.finish_reason === 'stop') &&
            text.trimEnd().endsWith('data: [DONE]')
          : response.status === 200;
      } catch {
        // Counted as lost below.
      }
      return sent;
    }

    it('loses no request the balancer still sent, and leaves balance == credits − Σ charges', async () => {
      const balancer = new Balancer();
      for (const replica of await Promise.all([startReplica('a'), startReplica('b')])) balancer.add(replica);
      balancer.start();
      await balancer.untilReady('a');
      await balancer.untilReady('b');

      const results: Sent[] = [];
      let restarting = true;
      // Until the restart is over and the last new replica has served too (bounded).
      const loading = () =>
        (restarting || !results.some((r) => r.replica === 'b2')) && results.length < MAX_REQUESTS;
      const load = Array.from({ length: CONCURRENCY }, async (_, worker) => {
        for (let i = 0; loading(); i++) {
          const replica = balancer.pick();
          if (!replica) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            continue;
          }
          results.push(await send(replica, (i + worker) % 3 === 0));
        }
      });

      // One replica at a time: stop it (the balancer sees its 503 and takes it out), start the new one.
      for (const [old, next] of [
        ['a', 'a2'],
        ['b', 'b2'],
      ] as const) {
        const replica = balancer.replicas.get(old)!;
        replica.process.child.kill('SIGTERM');
        const exit = await replica.process.exited;
        expect(exit.code, replica.process.stderr.slice(-2000)).toBe(0);
        balancer.remove(old);
        balancer.add(await startReplica(next));
        await balancer.untilReady(next);
      }
      restarting = false;
      await Promise.all(load);
      balancer.stop();
      for (const replica of balancer.replicas.values()) {
        replica.process.child.kill('SIGTERM');
        expect((await replica.process.exited).code).toBe(0);
      }

      const lost = results.filter((r) => r.status !== 200 || !r.complete);
      expect(lost, JSON.stringify(lost.slice(0, 5))).toEqual([]);
      expect(new Set(results.map((r) => r.replica))).toEqual(new Set(['a', 'b', 'a2', 'b2']));
      expect(results.filter((r) => r.stream).length).toBeGreaterThan(0);

      const [ledger] = await db.query<{ credits: string; charged: string; charges: string }>(
        `SELECT coalesce(sum(amount_micros) FILTER (WHERE kind <> 'charge'), 0) AS credits,
                coalesce(-sum(amount_micros) FILTER (WHERE kind = 'charge'), 0) AS charged,
                count(*) FILTER (WHERE kind = 'charge') AS charges
           FROM ledger_entries`,
      );
      const [account] = await db.query<{ balance_micros: string }>('SELECT balance_micros FROM accounts');
      expect(Number(ledger!.charges)).toBe(results.length);
      expect(Number(account!.balance_micros)).toBe(Number(ledger!.credits) - Number(ledger!.charged));
      expect(await db.query('SELECT id FROM credit_reservations')).toEqual([]);
    }, 240_000);
  },
);
