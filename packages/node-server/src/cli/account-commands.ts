import { type Account, formatMicrosAsUsd, type Micros, topUpAccount } from '@tollgate/core';
import { CliError } from './cli-errors.js';
import { type CliIo, formatTable, printResult } from './cli-io.js';
import { configDefaultRpm, loadConfig, requireAccount, withStorage } from './command-context.js';
import { COMMON_OPTIONS, intOption, parseCommandArgs, required, usdOption } from './parse-values.js';
import { commandUsage } from './usage.js';

/**
 * `tollgate account create --name NAME [--credit-usd A] [--monthly-limit-usd A] [--default-rpm N]
 * [--create] [--json]` → `{"id"}`. `--create` makes a SQLite database that does not exist yet.
 */
export async function accountCreate(args: string[], io: CliIo): Promise<number> {
  const command = 'account create';
  const { values } = parseCommandArgs(command, args, {
    ...COMMON_OPTIONS,
    json: { type: 'boolean' },
    name: { type: 'string' },
    'credit-usd': { type: 'string' },
    'monthly-limit-usd': { type: 'string' },
    'default-rpm': { type: 'string' },
    create: { type: 'boolean' },
  });
  if (values.help) return help(io, command);
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

  const result = await withStorage(
    values.db,
    io,
    async (storage) => {
      const account = await storage.createAccount({ name, monthlyLimitMicros, defaultRpm });
      const balance =
        credit === null ? 0 : (await topUpAccount(storage, account.id, credit, feePercent)).balanceMicros;
      return { id: account.id, balance };
    },
    { create: values.create ?? false },
  );
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
    if (values.help) return help(io, command);
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

/** `tollgate account list [--json]` → `{"data": [account, …]}`, oldest first. */
export async function accountList(args: string[], io: CliIo): Promise<number> {
  const command = 'account list';
  const { values } = parseCommandArgs(command, args, { ...COMMON_OPTIONS, json: { type: 'boolean' } });
  if (values.help) return help(io, command);
  const accounts = await withStorage(values.db, io, (storage) => storage.listAccounts());
  if (values.json) {
    io.stdout.write(`${JSON.stringify({ data: accounts.map(accountView) })}\n`);
  } else if (accounts.length === 0) {
    io.stdout.write('No accounts\n');
  } else {
    io.stdout.write(
      formatTable([
        ['ID', 'NAME', 'STATUS', 'BALANCE'],
        ...accounts.map((a) => [a.id, a.name, status(a), usd(a.balanceMicros)]),
      ]),
    );
  }
  return 0;
}

/**
 * `tollgate account show ID [--json]` → `{"data": {…account, "month_to_date", "key_count", …}}`:
 * balance, spend this UTC month against the monthly limit, default rpm, status and keys.
 */
export async function accountShow(args: string[], io: CliIo): Promise<number> {
  const command = 'account show';
  const { values, positionals } = parseCommandArgs(
    command,
    args,
    { ...COMMON_OPTIONS, json: { type: 'boolean' } },
    1,
  );
  if (values.help) return help(io, command);
  const id = positionals[0] as string;
  const now = Date.now();
  const { account, monthSpent, keys } = await withStorage(values.db, io, async (storage) => {
    const account = await requireAccount(storage, id);
    const monthSpent = await storage.getMonthToDateSpend(id, now);
    const keys = await storage.listApiKeys(id);
    return { account, monthSpent, keys };
  });
  const month = new Date(now).toISOString().slice(0, 7);
  const disabledKeys = keys.filter((key) => key.disabled).length;
  if (values.json) {
    const data = {
      ...accountView(account),
      month_to_date: { month, spent_micros: monthSpent, spent_usd: formatMicrosAsUsd(monthSpent) },
      key_count: keys.length,
      disabled_key_count: disabledKeys,
    };
    io.stdout.write(`${JSON.stringify({ data })}\n`);
    return 0;
  }
  const limit = account.monthlyLimitMicros;
  const configRpm = configDefaultRpm(values.config, io);
  const defaultRpm =
    account.defaultRpm !== null
      ? `${account.defaultRpm} rpm`
      : `none (keys without a limit get the config's${configRpm === undefined ? '' : `: ${configRpm} rpm`})`;
  io.stdout.write(
    `Account ${account.id} ("${account.name}")\n` +
      formatTable([
        ['  status', status(account)],
        ['  balance', usd(account.balanceMicros)],
        [
          '  month to date',
          `${usd(monthSpent)} of ${limit === null ? 'no monthly limit' : usd(limit)} (${month}, UTC)`,
        ],
        ['  default rpm', defaultRpm],
        ['  keys', `${keys.length}${disabledKeys > 0 ? ` (${disabledKeys} disabled)` : ''}`],
        ['  created', new Date(account.createdAt).toISOString()],
      ]),
  );
  return 0;
}

/** An account in `--json` output: micros, with USD formatted from them. */
function accountView(account: Account) {
  return {
    id: account.id,
    name: account.name,
    suspended: account.suspended,
    balance_micros: account.balanceMicros,
    balance_usd: formatMicrosAsUsd(account.balanceMicros),
    monthly_limit_micros: account.monthlyLimitMicros,
    monthly_limit_usd:
      account.monthlyLimitMicros === null ? null : formatMicrosAsUsd(account.monthlyLimitMicros),
    default_rpm: account.defaultRpm,
    created_at: new Date(account.createdAt).toISOString(),
  };
}

const status = (account: Account) => (account.suspended ? 'suspended' : 'active');
const usd = (micros: Micros) => `$${formatMicrosAsUsd(micros)}`;

function help(io: CliIo, command: string): number {
  io.stdout.write(commandUsage(command) ?? '');
  return 0;
}
