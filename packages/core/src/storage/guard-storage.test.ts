import { describe, expect, it } from 'vitest';
import { FakeClock } from '../routing/fake-clock.js';
import { guardStorage, StorageUnavailableError } from './guard-storage.js';
import { OUT_OF_SPACE_PROBE_DISTRUST_MS, StorageFaults } from './storage-faults.js';
import type { Storage } from './types.js';

const TIMEOUT_MS = 5_000;

/** A promise the test settles by hand. */
function gate<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const fault = (code: string) => Object.assign(new Error(`driver says ${code} about "secret row"`), { code });

function guarded(methods: Record<string, (...args: unknown[]) => unknown>) {
  const clock = new FakeClock(1_700_000_000_000);
  const logged: { level: string; msg?: string }[] = [];
  const logger = {
    info: (_: object, msg?: string) => logged.push({ level: 'info', msg }),
    warn: (_: object, msg?: string) => logged.push({ level: 'warn', msg }),
    error: (_: object, msg?: string) => logged.push({ level: 'error', msg }),
  };
  const faults = new StorageFaults(logger);
  const storage = guardStorage(methods as unknown as Storage, { timeoutMs: TIMEOUT_MS, clock, faults });
  return { storage, clock, faults, logged };
}

describe('guardStorage: a deadline on every storage call', () => {
  it('a call past its deadline rejects 503 storage_unavailable; what it does later is handed over as `late`', async () => {
    const stalled = gate<{ balanceMicros: number }>();
    const { storage, clock, faults } = guarded({ settleRequest: () => stalled.promise });
    const call = storage.settleRequest({} as never);
    const outcome = call.catch((error: unknown) => error);
    clock.advance(TIMEOUT_MS - 1);
    expect(faults.failing).toBeNull();
    clock.advance(1);
    const error = (await outcome) as StorageUnavailableError;
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect(error).toMatchObject({ status: 503, code: 'storage_unavailable', type: 'api_error' });
    expect(error.headers['Retry-After']).toBe('1');
    expect(faults.failing).toBe('storage unreachable');

    // The call lands after all: its caller learns what it did, and a write that landed is health.
    stalled.resolve({ balanceMicros: 7 });
    expect(await error.late).toEqual({ balanceMicros: 7 });
    expect(faults.failing).toBeNull();
  });

  it('an answer within the deadline passes through untouched, and cancels its timer', async () => {
    const { storage, clock, faults } = guarded({ getAccount: async () => ({ id: 'acct_1' }) });
    expect(await storage.getAccount('acct_1')).toEqual({ id: 'acct_1' });
    clock.advance(TIMEOUT_MS * 2);
    expect(faults.failing).toBeNull();
  });

  it('methods that do not return a promise, and the change feed, are left as they are', async () => {
    const subscribed = gate<() => Promise<void>>();
    const { storage, clock } = guarded({
      subscribeAuthChanges: () => subscribed.promise,
      describe: () => 'plain',
    });
    expect((storage as unknown as { describe(): string }).describe()).toBe('plain');
    const subscription = storage.subscribeAuthChanges!(() => {});
    clock.advance(TIMEOUT_MS * 2);
    const done = async () => {};
    subscribed.resolve(done);
    expect(await subscription).toBe(done);
  });
});

describe('guardStorage: a fault of the database is a 503, a refusal of the data is not', () => {
  it.each([
    ['SQLITE_FULL', 'storage cannot write'],
    ['SQLITE_READONLY', 'storage cannot write'],
    ['SQLITE_IOERR_WRITE', 'storage cannot write'],
    ['53100', 'storage cannot write'],
    ['25006', 'storage cannot write'],
    ['57P01', 'storage unreachable'],
    ['08006', 'storage unreachable'],
    ['ECONNREFUSED', 'storage unreachable'],
  ])('%s → StorageUnavailableError (cause kept), health says %s', async (code, reason) => {
    const cause = fault(code);
    const { storage, faults } = guarded({ createAccount: () => Promise.reject(cause) });
    const error = await storage.createAccount({ name: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as StorageUnavailableError).cause).toBe(cause);
    expect((error as StorageUnavailableError).late).toBeNull();
    expect((error as Error).message).not.toContain('secret row');
    expect(faults.failing).toBe(reason);
  });

  it('a lost connection reported by message only (pg) is a fault too', async () => {
    const { storage, faults } = guarded({
      createAccount: () => Promise.reject(new Error('Connection terminated unexpectedly')),
    });
    await expect(storage.createAccount({ name: 'x' })).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(faults.failing).toBe('storage unreachable');
  });

  it('a constraint or a bad id passes through unchanged and says nothing about health', async () => {
    const constraint = fault('SQLITE_CONSTRAINT_UNIQUE');
    const missing = new Error('no such account');
    const { storage, faults } = guarded({
      createApiKey: () => Promise.reject(constraint),
      createProject: () => Promise.reject(missing),
    });
    await expect(storage.createApiKey({} as never)).rejects.toBe(constraint);
    await expect(storage.createProject({} as never)).rejects.toBe(missing);
    expect(faults.failing).toBeNull();
  });

  it('a read that fails is a 503 but leaves the health of writes to the probe', async () => {
    const { storage, faults } = guarded({ getAccount: () => Promise.reject(fault('ECONNRESET')) });
    await expect(storage.getAccount('acct_1')).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(faults.failing).toBeNull();
  });
});

describe('StorageFaults: the latest write decides, and a probe alone does not prove space', () => {
  it('out of space: a successful probe does not clear it; a request’s write does', async () => {
    let full = true;
    const { storage, clock, faults, logged } = guarded({
      reserveCredit: async () => {
        if (full) throw fault('SQLITE_FULL');
        return { ok: true };
      },
      probeWrite: async () => {},
    });
    await expect(storage.reserveCredit({} as never)).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(faults.failing).toBe('storage cannot write');

    // One row rewritten in place still fits where the request's rows did not.
    await storage.probeWrite(clock.now());
    faults.probeSucceeded(clock.now());
    expect(faults.failing).toBe('storage cannot write');

    full = false;
    await storage.reserveCredit({} as never);
    expect(faults.failing).toBeNull();
    expect(logged.map((line) => line.msg)).toEqual([
      'health: storage failing',
      'health: storage writes again',
    ]);
  });

  it('out of space with nothing else writing: the probe is trusted again once no write failed for 30 s', () => {
    const { clock, faults } = guarded({});
    faults.writeFailed('out_of_space', clock.now(), fault('SQLITE_FULL'));
    clock.advance(OUT_OF_SPACE_PROBE_DISTRUST_MS - 1);
    faults.probeSucceeded(clock.now());
    expect(faults.failing).toBe('storage cannot write');
    clock.advance(1);
    faults.probeSucceeded(clock.now());
    expect(faults.failing).toBeNull();
  });

  it('unreachable or read-only: a successful probe is proof enough', () => {
    const { clock, faults } = guarded({});
    faults.writeFailed('unreachable', clock.now(), fault('ECONNREFUSED'));
    faults.probeSucceeded(clock.now());
    expect(faults.failing).toBeNull();
    faults.writeFailed('cannot_write', clock.now(), fault('SQLITE_READONLY'));
    faults.probeSucceeded(clock.now());
    expect(faults.failing).toBeNull();
  });

  it('out of space: housekeeping or a small row (a refusal’s record) is no proof either', async () => {
    const { storage, clock, faults } = guarded({
      sweepExpired: async () => 0,
      claimBatchItems: async () => [],
      insertRequestRecord: async () => {},
      settleRequest: async () => ({ balanceMicros: 0 }),
    });
    faults.writeFailed('out_of_space', clock.now(), fault('SQLITE_FULL'));
    await storage.sweepExpired(clock.now());
    await storage.claimBatchItems({} as never);
    await storage.insertRequestRecord({} as never);
    expect(faults.failing).toBe('storage cannot write');
    await storage.settleRequest({} as never);
    expect(faults.failing).toBeNull();
  });

  it('unreachable: any write that lands is proof', async () => {
    const { storage, clock, faults } = guarded({ insertRequestRecord: async () => {} });
    faults.writeFailed('unreachable', clock.now(), fault('ECONNRESET'));
    await storage.insertRequestRecord({} as never);
    expect(faults.failing).toBeNull();
  });
});
