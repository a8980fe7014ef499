import { formatMicrosAsUsd, topUpAccount } from '@tollgate/core';
import { type CliIo, printResult } from './cli-io.js';
import { loadConfig, requireAccount, withStorage } from './command-context.js';
import { COMMON_OPTIONS, parseCommandArgs, required, usdOption } from './parse-values.js';
import { commandUsage } from './usage.js';

/**
 * `tollgate credits add --account ID --usd AMOUNT [--json]`: a top-up, i.e. a credit line of the full
 * amount plus, when `billing.top_up_fee_percent` > 0, a fee line, written atomically.
 */
export async function creditsAdd(args: string[], io: CliIo): Promise<number> {
  const command = 'credits add';
  const { values } = parseCommandArgs(command, args, {
    ...COMMON_OPTIONS,
    json: { type: 'boolean' },
    account: { type: 'string' },
    usd: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(commandUsage(command) ?? '');
    return 0;
  }
  const accountId = required(command, 'account', values.account);
  const amount = usdOption(command, 'usd', required(command, 'usd', values.usd), { positive: true });
  const feePercent = loadConfig(values.config, io).config.billing.top_up_fee_percent ?? 0;

  const { entries, balanceMicros } = await withStorage(values.db, io, async (storage) => {
    await requireAccount(storage, accountId);
    return topUpAccount(storage, accountId, amount, feePercent);
  });
  const fee = -(entries.find((e) => e.kind === 'fee')?.amountMicros ?? 0);
  printResult(
    io,
    values.json ?? false,
    {
      account_id: accountId,
      amount_micros: amount,
      fee_micros: fee,
      balance_micros: balanceMicros,
      balance_usd: formatMicrosAsUsd(balanceMicros),
      ledger_entry_ids: entries.map((e) => e.id),
    },
    `Added $${formatMicrosAsUsd(amount)} to ${accountId}` +
      (fee > 0 ? ` (fee $${formatMicrosAsUsd(fee)})` : '') +
      `; balance $${formatMicrosAsUsd(balanceMicros)}`,
  );
  return 0;
}
