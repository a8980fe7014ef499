import { type ApiKey, formatMicrosAsUsd, keyView, type Storage } from '@tollgate/core';
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
 * strings like the CLI's others. Never the secret or its hash.
 */
export function keyCliView(key: ApiKey, now: number) {
  return {
    ...keyView(key),
    state: keyState(key, now),
    spent_usd: formatMicrosAsUsd(key.spentMicros),
    spend_limit_usd: key.spendLimitMicros === null ? null : formatMicrosAsUsd(key.spendLimitMicros),
  };
}

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
    const key = await withStorage(values.db, io, (storage) => apply(storage, action, id));
    const state = keyState(key, Date.now());
    printResult(io, values.json ?? false, keyCliView(key, Date.now()), `Key ${key.id} is ${state}`);
    return 0;
  };
}
