import {
  type ApiKey,
  formatMicrosAsUsd,
  type KeyWindowSpend,
  keyView,
  MICROS_PER_USD,
  type Storage,
} from '@tollgate/core';
import { CliError } from './cli-errors.js';
import { type CliIo, printResult } from './cli-io.js';
import { withStorage } from './command-context.js';
import { COMMON_OPTIONS, parseCommandArgs } from './parse-values.js';
import { commandUsage } from './usage.js';

/** What a key can do now: `enabled`; paused (`disabled`); `revoked` for good; past its `expired` time. */
export type KeyState = 'enabled' | 'disabled' | 'revoked' | 'expired';

/** The state of `key` at `now` (a revoked key is disabled too: it shows as revoked). */
export function keyState(key: ApiKey, now: number): KeyState {
  if (key.revoked) return 'revoked';
  if (key.disabled) return 'disabled';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  return 'enabled';
}

/**
 * A key in `--json` output: the view of `GET /v1/keys` with its `state`, its USD amounts as exact
 * strings like the CLI's others (`spend` its spend of the windows containing `now`,
 * `Storage.getKeyWindowSpend`). Never the secret or its hash.
 */
export function keyCliView(key: ApiKey, spend: KeyWindowSpend | undefined, now: number) {
  const view = keyView(key, spend, now);
  return {
    ...view,
    state: keyState(key, now),
    spent_usd: formatMicrosAsUsd(key.spentMicros),
    spend_limit_usd: key.spendLimitMicros === null ? null : formatMicrosAsUsd(key.spendLimitMicros),
    limit_remaining: view.limit_remaining === null ? null : exactUsd(view.limit_remaining),
    usage_daily: formatMicrosAsUsd(spend?.dailyMicros ?? 0),
    usage_weekly: formatMicrosAsUsd(spend?.weeklyMicros ?? 0),
    usage_monthly: formatMicrosAsUsd(spend?.monthlyMicros ?? 0),
  };
}

/** A USD number of the API's view (whole micros) as the CLI's exact string. */
const exactUsd = (usd: number) => formatMicrosAsUsd(Math.round(usd * MICROS_PER_USD));

type KeyAction = 'disable' | 'enable' | 'revoke';

/** The change an action makes, under the API's rules: a revoked key is never enabled again. */
async function apply(storage: Storage, action: KeyAction, id: string): Promise<ApiKey> {
  const key = await storage.getApiKeyById(id);
  if (!key) throw new CliError(`no key with id "${id}"`);
  if (action === 'revoke') return (await storage.revokeApiKey(key.accountId, id)) ?? key;
  if (action === 'enable' && key.revoked) {
    throw new CliError(`key "${id}" was revoked: a revoked key cannot be enabled (create a new key)`);
  }
  const changed = await storage.updateApiKey(key.accountId, id, { disabled: action === 'disable' });
  if (action === 'enable' && changed?.revoked) {
    throw new CliError(`key "${id}" was revoked: a revoked key cannot be enabled (create a new key)`);
  }
  return changed ?? key;
}

/**
 * `tollgate key disable ID` (pause), `tollgate key enable ID` (resume; never a revoked key) and
 * `tollgate key revoke ID` (for good: the row stays, refused with 401 key_revoked), `[--json]` →
 * the key with its `state`.
 */
export function keySetState(action: KeyAction) {
  return async (args: string[], io: CliIo): Promise<number> => {
    const command = `key ${action}`;
    const { values, positionals } = parseCommandArgs(
      command,
      args,
      { ...COMMON_OPTIONS, json: { type: 'boolean' } },
      1,
    );
    if (values.help) {
      io.stdout.write(commandUsage(command) ?? '');
      return 0;
    }
    const id = positionals[0] as string;
    const now = Date.now();
    const { key, spend } = await withStorage(values.db, io, async (storage) => {
      const changed = await apply(storage, action, id);
      return { key: changed, spend: (await storage.getKeyWindowSpend([id], now)).get(id) };
    });
    const state = keyState(key, now);
    printResult(io, values.json ?? false, keyCliView(key, spend, now), `Key ${key.id} is ${state}`);
    return 0;
  };
}
