import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import { CliProcess, cliEnv, serveArgs } from './cli-process.js';
import { call } from './http.js';
import { MockUpstream } from './mock-upstream.js';
import { contentOf, dataChunks, parseSse, SseReader } from './sse.js';
import { openSqlite } from './storage-variants.js';
import { createTenant, type Tenant } from './tenant.js';
import { fixtureWireBody, sseEventsOf } from './wire-fixtures.js';

/** Where the drain scenarios' provider answers on the mock. */
export const DRAIN_UPSTREAM = '/drain/v1/chat/completions';

/** A recorded OpenAI text stream (usage included), event by event. */
export const STREAM_EVENTS = sseEventsOf(fixtureWireBody('openai-chat-stream-text-include-usage.chunks.txt'));
/** The text of the recorded stream, as a client assembles it. */
export const STREAM_TEXT = contentOf(parseSse(STREAM_EVENTS.join('')));
/** Events the mock sends before it holds a stream, and the text they carry. */
const HOLD_AFTER = 4;
export const HELD_TEXT = contentOf(parseSse(STREAM_EVENTS.slice(0, HOLD_AFTER).join('')));

/** A SQLite file with a tenant, a config pointing at a mock upstream, and `tollgate serve` on them. */
export interface DrainScenario {
  dir: string;
  db: string;
  config: string;
  mock: MockUpstream;
  tenant: Tenant;
  /** The credit the tenant was given, in micros. */
  creditMicros: number;
  remove(): Promise<void>;
}

/**
 * Makes the database (a tenant with $10; the file in `dbDir` when given), the mock and the config;
 * nothing is serving yet.
 */
export async function prepareDrainScenario(dbDir?: string): Promise<DrainScenario> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-drain-'));
  const db = join(dbDir ?? dir, 'tollgate.db');
  const opened = await openSqlite(db);
  const creditMicros = 10_000_000;
  const tenant = await createTenant(opened.storage, { creditMicros });
  await opened.storage.close();
  const mock = await new MockUpstream().start();
  const config = join(dir, 'tollgate.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      providers: { drain: { format: 'openai', base_url: `${mock.url}/drain/v1`, api_key: 'sk-drain' } },
      models: [
        {
          id: 'acme/drain',
          max_output_tokens: 2000,
          endpoints: [
            { provider: 'drain', upstream_model: 'gpt-4.1-nano', pricing: { prompt: '1', completion: '4' } },
          ],
        },
      ],
      defaults: { rate_limit_rpm: 100_000 },
    }),
  );
  return {
    dir,
    db,
    config,
    mock,
    tenant,
    creditMicros,
    async remove() {
      mock.release();
      await mock.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const LISTENING = /Tollgate listening on (http:\/\/[0-9.]+:\d+)/;

/** `tollgate serve` on the scenario with `extra` flags; resolves with its URL once it listens. */
export async function startServe(
  scenario: DrainScenario,
  extra: string[],
): Promise<{ serve: CliProcess; url: string }> {
  const serve = new CliProcess([...serveArgs(scenario.db, scenario.config, 60_000), ...extra], cliEnv());
  const [, url] = await serve.waitFor(LISTENING, 'stderr');
  return { serve, url: url! };
}

/**
 * Starts a streamed chat whose provider stream the mock holds after its first content events (until
 * `mock.release…()`), and reads until that content (`HELD_TEXT`) arrived.
 */
export async function startHeldStream(url: string, scenario: DrainScenario) {
  scenario.mock.enqueue(DRAIN_UPSTREAM, { kind: 'sse', events: STREAM_EVENTS, holdAfter: HOLD_AFTER });
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${scenario.tenant.inferenceKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'acme/drain',
      stream: true,
      max_tokens: 1000,
      messages: [{ role: 'user', content: 'Name a holiday.' }],
    }),
  });
  expect(response.status).toBe(200);
  const requestId = response.headers.get('x-gateway-request-id')!;
  const reader = new SseReader(response);
  await reader.readUntil(() => reader.content() === HELD_TEXT);
  expect(reader.content()).toBe(HELD_TEXT);
  return { requestId, reader };
}

/** Polls `/readyz` (bounded) until it answers 503 draining; returns that answer. */
export async function untilDraining(url: string) {
  return vi.waitFor(
    async () => {
      const ready = await call(url, '/readyz');
      expect(ready.status).toBe(503);
      return ready;
    },
    { timeout: 10_000, interval: 20 },
  );
}

/** What the database says of the tenant once every server has exited. */
export async function moneyOf(scenario: DrainScenario) {
  const opened = await openSqlite(scenario.db);
  try {
    const accountId = scenario.tenant.account.id;
    const ledger = await opened.storage.listLedgerEntries(accountId);
    const charges = ledger.filter((e) => e.kind === 'charge');
    return {
      balanceMicros: (await opened.storage.getAccount(accountId))!.balanceMicros,
      charges,
      chargedMicros: charges.reduce((sum, e) => sum - e.amountMicros, 0),
      holds: await opened.storage.listReservations(accountId, Date.now()),
      record: (requestId: string) => opened.storage.getRequestRecord(accountId, requestId),
      close: () => opened.storage.close(),
    };
  } catch (error) {
    await opened.storage.close();
    throw error;
  }
}

/** The terminal chunk of a finished stream (the last data event before `[DONE]`). */
export function terminalOf(text: string) {
  return dataChunks(parseSse(text)).at(-1);
}
