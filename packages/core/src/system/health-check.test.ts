import { describe, expect, it } from 'vitest';
import { buildCatalogue } from '../catalogue/catalogue.js';
import { createGateway } from '../gateway.js';
import { FakeClock } from '../routing/fake-clock.js';
import type { Storage } from '../storage/types.js';

/** A storage whose write probe and ping fail while told to; nothing else is reached by `/healthz`. */
class FlakyStorage {
  writes = true;
  reads = true;
  probes = 0;
  pings = 0;
  readonly storage = {
    probeWrite: async () => {
      this.probes += 1;
      // A driver's message may quote data; `/healthz` must never pass it on.
      if (!this.writes)
        throw Object.assign(new Error('SQLITE_FULL: database or disk is full'), { code: 'SQLITE_FULL' });
    },
    ping: async () => {
      this.pings += 1;
      if (!this.reads) throw new Error('connect ECONNREFUSED 10.0.0.7:5432 (password "hunter2")');
    },
  } as unknown as Storage;
}

function gatewayOn(flaky: FlakyStorage) {
  const clock = new FakeClock(1_700_000_000_000);
  const logged: { level: string; obj: object; msg?: string }[] = [];
  const logger = {
    info: (obj: object, msg?: string) => logged.push({ level: 'info', obj, msg }),
    warn: (obj: object, msg?: string) => logged.push({ level: 'warn', obj, msg }),
    error: (obj: object, msg?: string) => logged.push({ level: 'error', obj, msg }),
  };
  const gateway = createGateway(flaky.storage, buildCatalogue({ providers: {}, models: [] }), {
    clock,
    logger,
  });
  const health = async () => {
    const response = await gateway.fetch(new Request('http://gateway.test/healthz'));
    return { status: response.status, body: await response.text() };
  };
  return { gateway, clock, health, logged };
}

describe('/healthz reflects whether storage can write', () => {
  it('200 while writes commit; 503 "storage cannot write" while they fail; 200 again once they succeed', async () => {
    const flaky = new FlakyStorage();
    const { clock, health, logged } = gatewayOn(flaky);
    expect(await health()).toEqual({ status: 200, body: '{"status":"ok"}' });

    flaky.writes = false;
    clock.advance(1_000);
    const failing = await health();
    expect(failing.status).toBe(503);
    expect(JSON.parse(failing.body)).toEqual({ status: 'unavailable', reason: 'storage cannot write' });
    expect(failing.body).not.toContain('SQLITE_FULL');
    expect(logged.filter((line) => line.level === 'error')).toEqual([
      {
        level: 'error',
        obj: { reason: 'storage cannot write', err: { name: 'Error', code: 'SQLITE_FULL' } },
        msg: 'health: storage failing',
      },
    ]);

    flaky.writes = true;
    clock.advance(1_000);
    expect(await health()).toEqual({ status: 200, body: '{"status":"ok"}' });
    expect(logged.at(-1)).toMatchObject({ level: 'info', msg: 'health: storage writes again' });
  });

  it('503 "storage unreachable" when even a read fails, without the driver message', async () => {
    const flaky = new FlakyStorage();
    flaky.writes = false;
    flaky.reads = false;
    const { health } = gatewayOn(flaky);
    const response = await health();
    expect(response.status).toBe(503);
    expect(JSON.parse(response.body)).toEqual({ status: 'unavailable', reason: 'storage unreachable' });
    expect(response.body).not.toMatch(/hunter2|ECONNREFUSED|10\.0\.0\.7/);
  });

  it('a storm of checks costs one write per second: answers are reused, and concurrent checks share a probe', async () => {
    const flaky = new FlakyStorage();
    const { clock, health } = gatewayOn(flaky);
    const answers = await Promise.all(Array.from({ length: 50 }, () => health()));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(flaky.probes).toBe(1);

    clock.advance(999);
    flaky.writes = false;
    expect((await health()).status).toBe(200);
    expect(flaky.probes).toBe(1);

    clock.advance(1);
    expect((await health()).status).toBe(503);
    expect(flaky.probes).toBe(2);
  });

  it('the OpenAPI document gives the 503 body its fixed reasons', async () => {
    const { gateway } = gatewayOn(new FlakyStorage());
    const document = await (await gateway.fetch(new Request('http://gateway.test/api/openapi.json'))).json();
    const unavailable = JSON.stringify(document.paths['/healthz'].get.responses['503']);
    expect(unavailable).toContain('storage cannot write');
    expect(unavailable).toContain('storage unreachable');
  });
});
