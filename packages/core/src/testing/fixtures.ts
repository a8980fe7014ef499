import { mintApiKey } from '../auth/api-key.js';
import type { KeyEnv, NewApiKey, NewLedgerEntry, Storage } from '../storage/types.js';

/** A realistic key (`gw_live_…`) and the `NewApiKey` that stores only its hash and prefix. */
export async function newKeyInput(
  accountId: string,
  overrides: Partial<Omit<NewApiKey, 'accountId' | 'hash' | 'prefix'>> & { env?: KeyEnv } = {},
): Promise<{ key: string; input: NewApiKey }> {
  const minted = await mintApiKey(overrides.env ?? 'live');
  return {
    key: minted.key,
    input: {
      accountId,
      name: 'test key',
      scope: 'inference',
      env: minted.env,
      ...overrides,
      hash: minted.hash,
      prefix: minted.prefix,
    },
  };
}

export function credit(amountMicros: number, description = 'Top-up'): NewLedgerEntry {
  return { amountMicros, kind: 'credit', description };
}

export function charge(amountMicros: number, description = 'openai/gpt-x: 10 in, 20 out'): NewLedgerEntry {
  return { amountMicros: -Math.abs(amountMicros), kind: 'charge', description };
}

export function fee(amountMicros: number, description = 'Top-up fee'): NewLedgerEntry {
  return { amountMicros: -Math.abs(amountMicros), kind: 'fee', description };
}

/** An account holding `balanceMicros` (one credit entry), for tests that start from money. */
export async function fundedAccount(storage: Storage, balanceMicros: number, name = 'funded') {
  const account = await storage.createAccount({ name });
  await storage.appendLedgerEntries(account.id, [credit(balanceMicros)]);
  return { ...account, balanceMicros };
}

/** Waits until the clock has moved past `ms`, so "oldest first" has distinct timestamps to order by. */
export async function nextMillisecond(): Promise<void> {
  const start = Date.now();
  while (Date.now() <= start + 1) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** Ids are opaque `prefix_` + base-36; the contract fixes only the prefix. */
export const ID_PATTERN = {
  account: /^acct_[0-9a-z]+$/,
  project: /^proj_[0-9a-z]+$/,
  key: /^key_[0-9a-z]+$/,
  ledger: /^led_[0-9a-z]+$/,
} as const;

/** A storage clock and the test clock may differ a little (a Postgres server in a container). */
export function expectRecentEpochMs(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && Math.abs(value - Date.now()) < 10 * 60_000;
}
