import { formatMicrosAsUsd, topUpAccount } from '@tollgate/core';
import { CliError } from './cli-errors.js';
import { type CliIo, printResult } from './cli-io.js';
import { loadConfig, withStorage } from './command-context.js';
import { COMMON_OPTIONS, intOption, parseCommandArgs, required, usdOption } from './parse-values.js';
import { USAGE } from './usage.js';

/** `tollgate account create --name NAME [--credit-usd A] [--monthly-limit-usd A] [--default-rpm N] [--json]` → `{"id"}`. */
export async function accountCreate(args: string[], io: CliIo): Promise<number> {
  const command = 'account create';
  const { values } = parseCommandArgs(command, args, {
    ...COMMON_OPTIONS,
    json: { type: 'boolean' },
    name: { type: 'string' },
    'credit-usd': { type: 'string' },
    'monthly-limit-usd': { type: 'string' },
    'default-rpm': { type: 'string' },
  });
  if (values.help) return help(io);
  const name = required(command, 'name', values.name);
  const credit =
    values['credit-usd'] === undefined
      ? null
      : usdOption(command, 'credit-usd', values['credit-usd'], { positive: true });
  const monthlyLimitMicros =
    values['monthly-limit-usd'] === undefined
      ? null
      : usdOption(command, 'monthly-limit-usd', values['monthly-limit-usd'], { positive: false });
  const defaultRpm =
    values['default-rpm'] === undefined
      ? null
      : intOption(command, 'default-rpm', values['default-rpm'], 1, 1_000_000);
  // Read the fee before writing anything, so a bad config does not leave an account without its credit.
  const feePercent =
    credit === null ? 0 : (loadConfig(values.config, io).config.billing.top_up_fee_percent ?? 0);

  const result = await withStorage(values.db, io, async (storage) => {
    const account = await storage.createAccount({ name, monthlyLimitMicros, defaultRpm });
    const balance =
      credit === null ? 0 : (await topUpAccount(storage, account.id, credit, feePercent)).balanceMicros;
    return { id: account.id, balance };
  });
  printResult(
    io,
    values.json ?? false,
    { id: result.id },
    `Created account ${result.id} ("${name}"), balance $${formatMicrosAsUsd(result.balance)}`,
  );
  return 0;
}

/** `tollgate account suspend ID` / `tollgate account unsuspend ID`. */
export function accountSetSuspended(suspended: boolean) {
  return async (args: string[], io: CliIo): Promise<number> => {
    const command = suspended ? 'account suspend' : 'account unsuspend';
    const { values, positionals } = parseCommandArgs(
      command,
      args,
      { ...COMMON_OPTIONS, json: { type: 'boolean' } },
      1,
    );
    if (values.help) return help(io);
    const id = positionals[0] as string;
    const account = await withStorage(values.db, io, (storage) => storage.setAccountSuspended(id, suspended));
    if (!account) throw new CliError(`no account with id "${id}"`);
    printResult(
      io,
      values.json ?? false,
      { id: account.id, suspended: account.suspended },
      `Account ${account.id} is ${account.suspended ? 'suspended' : 'active'}`,
    );
    return 0;
  };
}

function help(io: CliIo): number {
  io.stdout.write(USAGE);
  return 0;
}
