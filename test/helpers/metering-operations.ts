import type { CreditReservation, LimitReset, NewLedgerEntry, Storage } from '@tollgate/core';
import { newKeyInput, requestRecord } from '@tollgate/core/testing';
import fc from 'fast-check';

/*
 * The operations of the metering differential test (`test/metering-differential.test.ts`): what
 * moves money or limits a key, drawn at random and run on any `Storage`, each answering what its
 * caller saw with the store's own ids (accounts, keys, holds) replaced by names, so that two stores'
 * answers compare as they are.
 *
 * To add an operation (say a key's daily, weekly or monthly window cap): its arbitrary and its `run`
 * in OPERATIONS, the setting in `KeySetup` / `keySetupArb` and `openWorld`, and what it leaves in
 * `snapshot`. Operations of a kind with a `rank` share turns (they go out together, as the calls of
 * one turn of the event loop do: on Postgres, one batch statement); the others run alone.
 */

/** Ten minutes before a UTC month ends: a run's clock may cross into the next month. */
export const START = Date.UTC(2031, 0, 31, 23, 50);
/** Every rate limit here is per minute, the window the expiry sweep assumes. */
export const WINDOW_MS = 60_000;

export interface KeySetup {
  spendLimitMicros: number | null;
  limitReset: LimitReset | null;
}
export interface AccountSetup {
  balanceMicros: number;
  monthlyLimitMicros: number | null;
  keys: KeySetup[];
}

const keySetupArb: fc.Arbitrary<KeySetup> = fc.record({
  spendLimitMicros: fc.option(fc.integer({ min: 0, max: 6_000 }), { nil: null }),
  limitReset: fc.option(fc.constantFrom<LimitReset>('daily', 'weekly', 'monthly'), { nil: null }),
});
export const setupArb: fc.Arbitrary<AccountSetup[]> = fc.array(
  fc.record({
    balanceMicros: fc.integer({ min: 0, max: 20_000 }),
    monthlyLimitMicros: fc.option(fc.integer({ min: 0, max: 8_000 }), { nil: null }),
    keys: fc.array(keySetupArb, { minLength: 1, maxLength: 2 }),
  }),
  { minLength: 1, maxLength: 2 },
);

/** A hold a reserve took: what a later settle, release or extension of it needs. */
interface Held {
  name: string;
  reservationId: string;
  accountId: string;
  keyId: string;
  requestId: string;
  amountMicros: number;
}

/** One store and what the operations made in it, by name. */
export interface World {
  readonly storage: Storage;
  /** Every operation's `now`, and the store's own clock (`Date.now`, which the test pins to it). */
  readonly clock: { now: number };
  readonly accounts: { id: string; name: string; keys: { id: string; name: string }[] }[];
  /** Per request, in the order the requests were made: its hold, or null when none was taken (yet). */
  readonly requests: { accountId: string; requestId: string; held: Held | null }[];
  readonly names: Map<string, string>;
}

/** Sets up `setup`'s accounts and keys on `storage`. */
export async function openWorld(
  storage: Storage,
  setup: AccountSetup[],
  clock: { now: number },
): Promise<World> {
  const world: World = { storage, clock, accounts: [], requests: [], names: new Map() };
  for (const [a, accountSetup] of setup.entries()) {
    const account = await storage.createAccount({
      name: `a${a}`,
      monthlyLimitMicros: accountSetup.monthlyLimitMicros,
    });
    if (accountSetup.balanceMicros > 0) {
      await storage.appendLedgerEntries(account.id, [credit(accountSetup.balanceMicros)]);
    }
    const keys = [];
    for (const [k, keySetup] of accountSetup.keys.entries()) {
      const { input } = await newKeyInput(account.id, {
        spendLimitMicros: keySetup.spendLimitMicros,
        limitReset: keySetup.limitReset,
      });
      keys.push({ id: (await storage.createApiKey(input)).id, name: `a${a}k${k}` });
    }
    world.accounts.push({ id: account.id, name: `a${a}`, keys });
  }
  for (const account of world.accounts) {
    world.names.set(account.id, account.name);
    for (const key of account.keys) world.names.set(key.id, key.name);
  }
  return world;
}

const pick = <T>(list: readonly T[], n: number): T => list[n % list.length]!;
const credit = (amountMicros: number): NewLedgerEntry => ({
  amountMicros,
  kind: 'credit',
  description: 'Top-up',
});
const nameOf = (world: World, id: string | null) => (id === null ? null : (world.names.get(id) ?? id));

/** The holds taken so far, in the order their requests were made. */
const holds = (world: World) => world.requests.flatMap((request) => (request.held ? [request.held] : []));

/** A reservation with its ids as names. */
function named(world: World, reservation: CreditReservation) {
  return {
    ...reservation,
    id: nameOf(world, reservation.id),
    accountId: nameOf(world, reservation.accountId),
    keyId: nameOf(world, reservation.keyId),
  };
}

/** An error's message as the outcome of the operation that threw it. */
async function outcome<T>(run: () => Promise<T>): Promise<T | { error: string }> {
  try {
    return await run();
  } catch (error) {
    return { error: (error as Error).message };
  }
}

interface OperationKind<Op> {
  readonly arbitrary: fc.Arbitrary<Op>;
  /** Operations of kinds with a rank share a turn, in rank order (settles before reserves, as Postgres runs a batch). */
  readonly rank?: number;
  run(world: World, op: Op): Promise<unknown>;
}

const reserve: OperationKind<{
  account: number;
  key: number;
  amountMicros: number;
  ttlMs: number;
  record: boolean;
  hitLimit: number | null;
}> = {
  arbitrary: fc.record({
    account: fc.nat(),
    key: fc.nat(),
    amountMicros: fc.oneof(fc.integer({ min: 0, max: 1_500 }), fc.integer({ min: 1_500, max: 7_000 })),
    ttlMs: fc.constantFrom(1_000, 60_000, 900_000),
    record: fc.boolean(),
    hitLimit: fc.option(fc.integer({ min: 1, max: 2 }), { nil: null }),
  }),
  rank: 1,
  async run(world, op) {
    const account = pick(world.accounts, op.account);
    const key = pick(account.keys, op.key);
    const request = {
      accountId: account.id,
      requestId: `req_${world.requests.length}`,
      held: null as Held | null,
    };
    world.requests.push(request);
    const now = world.clock.now;
    const result = await world.storage.reserveCredit({
      accountId: account.id,
      keyId: key.id,
      requestId: request.requestId,
      amountMicros: op.amountMicros,
      now,
      ttlMs: op.ttlMs,
      ...(op.record
        ? {
            record: {
              ...requestRecord(account.id, { id: request.requestId, keyId: key.id }),
              status: 'in_progress',
            },
          }
        : {}),
      ...(op.hitLimit === null
        ? {}
        : { rateLimit: { subject: `key:${key.name}`, limit: op.hitLimit, windowMs: WINDOW_MS, now } }),
    });
    if (!result.ok) return result;
    const { reservation } = result;
    request.held = {
      name: `hold:${request.requestId}`,
      reservationId: reservation.id,
      accountId: account.id,
      keyId: key.id,
      requestId: request.requestId,
      amountMicros: op.amountMicros,
    };
    world.names.set(reservation.id, request.held.name);
    return { ok: true, reservation: named(world, reservation) };
  },
};

const settle: OperationKind<{ hold: number; percent: number; keyed: boolean }> = {
  arbitrary: fc.record({
    hold: fc.nat(),
    // 0: settled without a charge; else the share of the hold charged (a charge never exceeds its hold).
    percent: fc.oneof(fc.constant(0), fc.constant(100), fc.integer({ min: 1, max: 100 })),
    keyed: fc.boolean(),
  }),
  rank: 0,
  async run(world, op) {
    const all = holds(world);
    if (all.length === 0) return 'no hold to settle';
    const held = pick(all, op.hold);
    const amountMicros = Math.floor((held.amountMicros * op.percent) / 100);
    const charge =
      amountMicros > 0
        ? { amountMicros, description: `charge of ${held.requestId}`, keyId: op.keyed ? held.keyId : null }
        : null;
    const record = requestRecord(held.accountId, {
      id: held.requestId,
      keyId: held.keyId,
      costMicros: amountMicros,
    });
    return {
      settled: held.name,
      ...(await outcome(() =>
        world.storage.settleRequest({ reservationId: held.reservationId, record, charge }),
      )),
    };
  },
};

/** A record written alone (a refusal's, a cached answer's): on Postgres a settle without hold or charge. */
const recordAlone: OperationKind<{ account: number }> = {
  arbitrary: fc.record({ account: fc.nat() }),
  rank: 0,
  async run(world, op) {
    const account = pick(world.accounts, op.account);
    const requestId = `req_${world.requests.length}`;
    world.requests.push({ accountId: account.id, requestId, held: null });
    const record = requestRecord(account.id, { id: requestId, status: 'refused', httpStatus: 402 });
    return outcome(() => world.storage.insertRequestRecord(record).then(() => 'recorded'));
  },
};

const hit: OperationKind<{ account: number; key: number; limit: number }> = {
  arbitrary: fc.record({ account: fc.nat(), key: fc.nat(), limit: fc.integer({ min: 1, max: 3 }) }),
  async run(world, op) {
    const key = pick(pick(world.accounts, op.account).keys, op.key);
    return world.storage.hitRateLimit({
      subject: `key:${key.name}`,
      limit: op.limit,
      windowMs: WINDOW_MS,
      now: world.clock.now,
    });
  },
};

const release: OperationKind<{ hold: number }> = {
  arbitrary: fc.record({ hold: fc.nat() }),
  async run(world, op) {
    const all = holds(world);
    if (all.length === 0) return 'no hold to release';
    const held = pick(all, op.hold);
    await world.storage.releaseReservation(held.reservationId);
    return { released: held.name };
  },
};

const extend: OperationKind<{ hold: number; byMs: number }> = {
  arbitrary: fc.record({ hold: fc.nat(), byMs: fc.constantFrom(1_000, 60_000, 900_000) }),
  async run(world, op) {
    const all = holds(world);
    if (all.length === 0) return 'no hold to extend';
    const held = pick(all, op.hold);
    const now = world.clock.now;
    return {
      extended: held.name,
      live: await world.storage.extendReservation(held.reservationId, now, now + op.byMs),
    };
  },
};

const topUp: OperationKind<{ account: number; amountMicros: number }> = {
  arbitrary: fc.record({ account: fc.nat(), amountMicros: fc.integer({ min: 1, max: 3_000 }) }),
  async run(world, op) {
    const account = pick(world.accounts, op.account);
    const { balanceMicros } = await world.storage.appendLedgerEntries(account.id, [credit(op.amountMicros)]);
    return { toppedUp: account.name, balanceMicros };
  },
};

const sweep: OperationKind<Record<string, never>> = {
  arbitrary: fc.constant({}),
  async run(world) {
    return { swept: await world.storage.sweepExpired(world.clock.now) };
  },
};

/** The clock moves on: holds expire, windows slide, and the month may end. */
const advance: OperationKind<{ ms: number }> = {
  arbitrary: fc.record({ ms: fc.constantFrom(1, 999, 30_000, 61_000, 300_000) }),
  async run(world, op) {
    world.clock.now += op.ms;
    return { now: world.clock.now };
  },
};

/** Every kind of operation, by name. */
export const OPERATIONS = { reserve, settle, recordAlone, hit, release, extend, topUp, sweep, advance };
type Kind = keyof typeof OPERATIONS;
type OpOf<K extends Kind> = (typeof OPERATIONS)[K] extends OperationKind<infer Op> ? Op : never;
/** One operation drawn: its kind and its parameters. */
export type Operation = { [K in Kind]: { kind: K; op: OpOf<K> } }[Kind];

const ofKind = <K extends Kind>(kind: K) =>
  (OPERATIONS[kind].arbitrary as fc.Arbitrary<unknown>).map((op) => ({ kind, op }) as Operation);

/**
 * A step: a turn of operations that go out together (the kinds with a rank, several at once, or
 * rate-limit hits), or one operation alone.
 */
export const stepArb: fc.Arbitrary<Operation[]> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.array(
      fc.oneof(ofKind('reserve'), ofKind('reserve'), ofKind('settle'), ofKind('recordAlone')),
      { minLength: 1, maxLength: 6 },
    ),
  },
  { weight: 1, arbitrary: fc.array(ofKind('hit'), { minLength: 1, maxLength: 4 }) },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        ofKind('release'),
        ofKind('extend'),
        ofKind('topUp'),
        ofKind('sweep'),
        ofKind('advance'),
        ofKind('advance'),
      )
      .map((op) => [op]),
  },
);

/** Runs one step on `world`: its operations at once, in rank order, answering in that order. */
export async function runStep(world: World, step: readonly Operation[]): Promise<unknown[]> {
  const rank = (operation: Operation) => (OPERATIONS[operation.kind] as OperationKind<unknown>).rank ?? 0;
  const ordered = [...step].sort((a, b) => rank(a) - rank(b));
  const answers = await Promise.all(
    ordered.map((operation) =>
      (OPERATIONS[operation.kind] as OperationKind<unknown>).run(world, operation.op),
    ),
  );
  return ordered.map((operation, i) => ({ [operation.kind]: answers[i] }));
}

/** What the operations left: per account its balance, month, keys' spend, live holds and ledger; every record. */
export async function snapshot(world: World) {
  const { storage } = world;
  const now = world.clock.now;
  const accounts = [];
  for (const account of world.accounts) {
    const keys = await storage.listApiKeys(account.id);
    const windows = await storage.getKeyWindowSpend(
      keys.map((key) => key.id),
      now,
    );
    accounts.push({
      account: account.name,
      balanceMicros: (await storage.getAccount(account.id))?.balanceMicros,
      monthToDateMicros: await storage.getMonthToDateSpend(account.id, now),
      keys: keys.map((key) => ({
        key: nameOf(world, key.id),
        spentMicros: key.spentMicros,
        windows: windows.get(key.id) ?? null,
      })),
      // By request: holds taken at one instant list in the order of their random ids.
      holds: (await storage.listReservations(account.id, now))
        .map((hold) => named(world, hold))
        .sort((a, b) => (a.requestId < b.requestId ? -1 : 1)),
      ledger: (await storage.listLedgerEntries(account.id)).map(
        ({ id: _, accountId: __, keyId, ...entry }) => ({
          ...entry,
          keyId: nameOf(world, keyId),
        }),
      ),
    });
  }
  const records = [];
  for (const { accountId, requestId } of world.requests) {
    const record = await storage.getRequestRecord(accountId, requestId);
    records.push(
      record && {
        id: requestId,
        status: record.status,
        httpStatus: record.httpStatus,
        errorCode: record.errorCode,
        costMicros: record.costMicros,
      },
    );
  }
  return { accounts, records };
}
