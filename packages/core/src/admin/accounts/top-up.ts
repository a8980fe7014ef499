import { ceilDiv } from '../../money/ceil-div.js';
import { formatMicrosAsUsd } from '../../money/micros.js';
import type { LedgerEntry, Micros, NewLedgerEntry, Storage } from '../../storage/types.js';

/**
 * The ledger lines of a top-up: a credit of the full amount and, when a fee percentage is set, a fee
 * of minus that percentage rounded up to the micro, as its own entry. `feePercentMicros` is the
 * percentage in micro-units ("5" % → 5_000_000), as the config parser produces it.
 */
export function topUpEntries(amountMicros: Micros, feePercentMicros: Micros): NewLedgerEntry[] {
  if (!Number.isSafeInteger(amountMicros) || amountMicros <= 0) {
    throw new RangeError('a top-up amount must be a positive number of micros');
  }
  const entries: NewLedgerEntry[] = [
    { amountMicros, kind: 'credit', description: `Top-up of $${formatMicrosAsUsd(amountMicros)}` },
  ];
  const fee = ceilDiv(BigInt(amountMicros) * BigInt(feePercentMicros), 100n * 1_000_000n);
  if (fee > 0) {
    entries.push({
      amountMicros: -fee,
      kind: 'fee',
      description: `Top-up fee ${formatPercent(feePercentMicros)}% of $${formatMicrosAsUsd(amountMicros)}`,
    });
  }
  return entries;
}

/** Credits an account (one atomic ledger write of the credit and its fee line). */
export async function topUpAccount(
  storage: Storage,
  accountId: string,
  amountMicros: Micros,
  feePercentMicros: Micros,
): Promise<{ entries: LedgerEntry[]; balanceMicros: Micros }> {
  return storage.appendLedgerEntries(accountId, topUpEntries(amountMicros, feePercentMicros));
}

function formatPercent(percentMicros: Micros): string {
  return formatMicrosAsUsd(percentMicros).replace(/\.?0+$/, '');
}
