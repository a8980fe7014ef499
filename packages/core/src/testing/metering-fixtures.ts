import { newId } from '../ids.js';
import type { RequestRecord, ReserveCreditInput, ReserveCreditResult } from '../storage/metering-types.js';
import type { Storage } from '../storage/types.js';
import { credit, newKeyInput } from './fixtures.js';
import type { ConformanceContext } from './storage-harness.js';

/** A complete, plausible record of a successful uncharged request; override what the test is about. */
export function requestRecord(accountId: string, overrides: Partial<RequestRecord> = {}): RequestRecord {
  return {
    id: newId('req'),
    accountId,
    keyId: null,
    projectId: null,
    endpoint: 'chat.completions',
    requestedModel: null,
    model: 'openai/gpt-4o-mini',
    provider: 'openai',
    status: 'success',
    httpStatus: 200,
    errorCode: null,
    errorMessage: null,
    stream: false,
    promptTokens: 10,
    completionTokens: 20,
    cachedTokens: 0,
    costMicros: 0,
    savedMicros: 0,
    overrunMicros: 0,
    waived: null,
    byok: false,
    cacheHit: false,
    preset: null,
    ttftMs: null,
    durationMs: 120,
    finishReason: 'stop',
    attempts: 1,
    routingFailures: [],
    attachments: {},
    guardrails: [],
    metadata: {},
    createdAt: Date.now(),
    ...overrides,
  };
}

/** An account holding `balanceMicros` (0 = no ledger entry) with one inference key. */
export async function meteredAccount(
  storage: Storage,
  options: { balanceMicros: number; monthlyLimitMicros?: number; spendLimitMicros?: number; name?: string },
) {
  const account = await storage.createAccount({
    name: options.name ?? 'metered',
    monthlyLimitMicros: options.monthlyLimitMicros ?? null,
  });
  if (options.balanceMicros !== 0) {
    await storage.appendLedgerEntries(account.id, [credit(options.balanceMicros)]);
  }
  const { input } = await newKeyInput(account.id, { spendLimitMicros: options.spendLimitMicros ?? null });
  const key = await storage.createApiKey(input);
  return { account: { ...account, balanceMicros: options.balanceMicros }, key };
}

/** A reserve input for this account and key, held for a minute from now unless overridden. */
export function reserveInput(
  accountId: string,
  keyId: string,
  amountMicros: number,
  overrides: Partial<ReserveCreditInput> = {},
): ReserveCreditInput {
  return {
    accountId,
    keyId,
    requestId: newId('req'),
    amountMicros,
    now: Date.now(),
    ttlMs: 60_000,
    ...overrides,
  };
}

/** The hold of a reserve that must succeed. */
export async function mustReserve(storage: Storage, input: ReserveCreditInput) {
  const result: ReserveCreditResult = await storage.reserveCredit(input);
  if (!result.ok) throw new Error(`expected the reserve to succeed, got ${JSON.stringify(result)}`);
  return result.reservation;
}

/**
 * Runs `count` calls at once, every other one through a second storage on the same database when
 * the harness can open one, and closes that second storage afterwards.
 */
export async function concurrently<T>(
  ctx: ConformanceContext,
  count: number,
  call: (storage: Storage, i: number) => Promise<T>,
): Promise<T[]> {
  const second = await ctx.harness.openSecond?.();
  try {
    return await Promise.all(
      Array.from({ length: count }, (_, i) => call(second && i % 2 === 1 ? second : ctx.storage, i)),
    );
  } finally {
    await second?.close();
  }
}
