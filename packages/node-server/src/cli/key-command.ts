import {
  type Account,
  type ApiKey,
  capSpentMicros,
  createApiKey,
  formatMicrosAsUsd,
  type KeyWindowSpend,
  LIMIT_RESETS,
  limitResetsAt,
} from '@tollgate/core';
import { CliError, UsageError } from './cli-errors.js';
import { type CliIo, formatTable, printResult } from './cli-io.js';
import { configDefaultRpm, requireAccount, withStorage } from './command-context.js';
import { keyCliView, keyState } from './key-state-commands.js';
import {
  COMMON_OPTIONS,
  enumOption,
  intOption,
  parseCommandArgs,
  required,
  usdOption,
} from './parse-values.js';
import { commandUsage } from './usage.js';

/**
 * `tollgate key create --account ID --name NAME [--scope inference|provisioning] [--env live|test]
 * [--project ID] [--spend-limit-usd A] [--limit-reset daily|weekly|monthly] [--rate-limit-rpm N]
 * [--json]` → `{"id", "key", "prefix"}` (`key list` shows its window). This output is the only time
 * the full key is ever shown.
 */
export async function keyCreate(args: string[], io: CliIo): Promise<number> {
  const command = 'key create';
  const { values } = parseCommandArgs(command, args, {
    ...COMMON_OPTIONS,
    json: { type: 'boolean' },
    account: { type: 'string' },
    name: { type: 'string' },
    scope: { type: 'string' },
    env: { type: 'string' },
    project: { type: 'string' },
    'spend-limit-usd': { type: 'string' },
    'limit-reset': { type: 'string' },
    'rate-limit-rpm': { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(commandUsage(command) ?? '');
    return 0;
  }
  const accountId = required(command, 'account', values.account);
  const limitReset =
    values['limit-reset'] === undefined
      ? null
      : enumOption(command, 'limit-reset', values['limit-reset'], LIMIT_RESETS);
  const name = required(command, 'name', values.name);
  if (name.length > 100) throw new UsageError(`${command}: --name must be at most 100 characters`);
  const scope = enumOption(command, 'scope', values.scope ?? 'inference', [
    'inference',
    'provisioning',
  ] as const);
  const env = enumOption(command, 'env', values.env ?? 'live', ['live', 'test'] as const);
  const spendLimitMicros =
    values['spend-limit-usd'] === undefined
      ? null
      : usdOption(command, 'spend-limit-usd', values['spend-limit-usd'], { positive: true });
  const rateLimitRpm =
    values['rate-limit-rpm'] === undefined
      ? null
      : intOption(command, 'rate-limit-rpm', values['rate-limit-rpm'], 1, 1_000_000);
  const projectId = values.project ?? null;

  const { key, secret } = await withStorage(values.db, io, async (storage) => {
    await requireAccount(storage, accountId);
    if (projectId && !(await storage.getProject(accountId, projectId))) {
      throw new CliError(`no project "${projectId}" in account "${accountId}"`);
    }
    return createApiKey(storage, {
      accountId,
      name,
      scope,
      env,
      projectId,
      spendLimitMicros,
      limitReset,
      rateLimitRpm,
    });
  });
  printResult(
    io,
    values.json ?? false,
    { id: key.id, key: secret, prefix: key.prefix },
    `Created ${scope} key ${key.id} for ${accountId} (shown once, store it now): ${secret}`,
  );
  return 0;
}

/**
 * `tollgate key list --account ID [--json]` → `{"data": [key, …]}`, oldest first, disabled and
 * revoked keys included: prefix, scope, env, state (enabled, disabled, revoked, expired), spend
 * against the cap, rate limit. Never the secret or its hash.
 */
export async function keyList(args: string[], io: CliIo): Promise<number> {
  const command = 'key list';
  const { values } = parseCommandArgs(command, args, {
    ...COMMON_OPTIONS,
    json: { type: 'boolean' },
    account: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(commandUsage(command) ?? '');
    return 0;
  }
  const accountId = required(command, 'account', values.account);
  const now = Date.now();
  const { account, keys, spend } = await withStorage(values.db, io, async (storage) => {
    const found = await requireAccount(storage, accountId);
    const listed = await storage.listApiKeys(accountId);
    const windows = await storage.getKeyWindowSpend(
      listed.map((key) => key.id),
      now,
    );
    return { account: found, keys: listed, spend: windows };
  });
  if (values.json) {
    const data = keys.map((key) => keyCliView(key, spend.get(key.id), now));
    io.stdout.write(`${JSON.stringify({ data })}\n`);
  } else if (keys.length === 0) {
    io.stdout.write(`No keys for ${accountId}\n`);
  } else {
    const defaultRpm = configDefaultRpm(values.config, io);
    io.stdout.write(
      formatTable([
        ['ID', 'PREFIX', 'NAME', 'SCOPE', 'ENV', 'STATUS', 'SPENT / CAP', 'RATE LIMIT'],
        ...keys.map((key) => [
          key.id,
          key.prefix,
          key.name,
          key.scope,
          key.env,
          keyState(key, now),
          spentText(key, spend.get(key.id), now),
          rateLimitText(key, account, defaultRpm),
        ]),
      ]),
    );
  }
  return 0;
}

/** The spend the cap applies to against the cap: the lifetime's, or the window's until it resets. */
function spentText(key: ApiKey, spend: KeyWindowSpend | undefined, now: number): string {
  const usd = (micros: number) => `$${formatMicrosAsUsd(micros)}`;
  const cap = key.spendLimitMicros === null ? 'no cap' : usd(key.spendLimitMicros);
  const reset = key.limitReset;
  if (reset === null) return `${usd(key.spentMicros)} / ${cap}`;
  return `${usd(capSpentMicros(key, spend))} / ${cap} ${reset} (resets ${limitResetsAt(reset, now)})`;
}

/** The rate limit that applies, and where it comes from (the key, its account, or the config). */
function rateLimitText(key: ApiKey, account: Account, configRpm: number | undefined): string {
  if (key.rateLimitRpm !== null) return `${key.rateLimitRpm} rpm`;
  if (account.defaultRpm !== null) return `${account.defaultRpm} rpm (account default)`;
  return configRpm === undefined ? 'config default' : `${configRpm} rpm (config default)`;
}
