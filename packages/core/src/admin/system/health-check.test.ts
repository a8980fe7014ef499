import { describe, expect, it } from 'vitest';
import { buildCatalogue } from '../../catalogue/catalogue.js';
import { createGateway } from '../../gateway.js';
import { FakeClock } from '../../routing/fake-clock.js';
import type { Storage } from '../../storage/types.js';

/** A storage whose write probe and ping fail (or hang) while told to; nothing else is reached by `/healthz`. */
class FlakyStorage {
  writes = true;
  reads = true;
  hangs = false;
  probes = 0;
  pings = 0;
  readonly storage = {
    probeWrite: async () => {
      this.probes += 1;
      if (this.hangs) await new Promise(() => {});
      // A driver's message may quote data; `/healthz` must never pass it on.
      if (!this.writes)
        throw Object.assign(new Error('SQLITE_READONLY: attempt to write a readonly database'), {
          code: 'SQLITE_READONLY',
        });
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
  const probe = async (path: string) => {
    const response = await gateway.fetch(new Request(`http://gateway.test${path}`));
    return {
      status: response.status,
      body: await response.text(),
      id: response.headers.get('x-gateway-request-id'),
    };
  };
  const health = async () => {
    const { status, body } = await probe('/healthz');
    return { status, body };
  };
  return { gateway, clock, health, probe, logged };
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
    expect(failing.body).not.toContain('SQLITE_READONLY');
    expect(logged.filter((line) => line.level === 'error')).toEqual([
      {
        level: 'error',
        obj: { reason: 'storage cannot write', err: { name: 'Error', code: 'SQLITE_READONLY' } },
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

  it('a probe past the storage deadline is 503 "storage unreachable"; then checks answer at once while it hangs', async () => {
    const flaky = new FlakyStorage();
    flaky.hangs = true;
    const { clock, health } = gatewayOn(flaky);
    const first = health();
    clock.advance(5_000);
    expect(await first).toEqual({
      status: 503,
      body: '{"status":"unavailable","reason":"storage unreachable"}',
    });
    // No ping after a timeout: a database that did not answer the write will not answer it either.
    expect(flaky.pings).toBe(0);
    clock.advance(1_000);
    // The next probe hangs too; the check does not wait for it.
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

describe('/livez and /readyz', () => {
  it('/livez: 200 with a request id, without touching storage, whatever storage does', async () => {
    const flaky = new FlakyStorage();
    flaky.writes = false;
    flaky.reads = false;
    const { probe } = gatewayOn(flaky);
    const live = await probe('/livez');
    expect(live).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    expect(live.id).toMatch(/^req_/);
    expect(flaky.probes + flaky.pings).toBe(0);
  });

  it('/readyz: 200 while storage writes; 503 with the storage reason while it cannot', async () => {
    const flaky = new FlakyStorage();
    const { clock, probe } = gatewayOn(flaky);
    const ready = await probe('/readyz');
    expect(ready).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    expect(ready.id).toMatch(/^req_/);
    flaky.writes = false;
    clock.advance(1_000);
    expect(await probe('/readyz')).toMatchObject({
      status: 503,
      body: '{"status":"unavailable","reason":"storage cannot write"}',
    });
  });

  it('/readyz: 503 {"status":"draining"} from drain() on, while /healthz and requests still answer', async () => {
    const flaky = new FlakyStorage();
    const { gateway, probe } = gatewayOn(flaky);
    expect((await probe('/readyz')).status).toBe(200);
    const drained = gateway.drain({ graceMs: 60_000 });
    const draining = await probe('/readyz');
    expect(draining).toMatchObject({ status: 503, body: '{"status":"draining"}' });
    expect(draining.id).toMatch(/^req_/);
    expect((await probe('/healthz')).status).toBe(200);
    expect((await probe('/livez')).status).toBe(200);
    await expect(drained).resolves.toEqual({ cut: 0 });
  });
});
