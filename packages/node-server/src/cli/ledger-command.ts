import { formatMicrosAsUsd, type LedgerEntry, ledgerEntryView } from '@tollgate/core';
import { CliError } from './cli-errors.js';
import { type CliIo, formatTable } from './cli-io.js';
import { requireAccount, withStorage } from './command-context.js';
import { COMMON_OPTIONS, intOption, parseCommandArgs, required } from './parse-values.js';
import { commandUsage } from './usage.js';

/**
 * `tollgate ledger --account ID [--limit N] [--after ENTRY_ID] [--json]`: the account's ledger,
 * newest first, as `GET /v1/ledger` pages it (default 50 entries, at most 200).
 */
export async function ledgerList(args: string[], io: CliIo): Promise<number> {
  const command = 'ledger';
  const { values } = parseCommandArgs(command, args, {
    ...COMMON_OPTIONS,
    json: { type: 'boolean' },
    account: { type: 'string' },
    limit: { type: 'string' },
    after: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(commandUsage(command) ?? '');
    return 0;
  }
  const accountId = required(command, 'account', values.account);
  const limit = values.limit === undefined ? 50 : intOption(command, 'limit', values.limit, 1, 200);
  const after = values.after === undefined ? undefined : required(command, 'after', values.after);
  const page = await withStorage(values.db, io, async (storage) => {
    await requireAccount(storage, accountId);
    return storage.listLedgerPage(accountId, { limit, ...(after !== undefined && { after }) });
  });
  if (!page) throw new CliError(`no ledger entry "${after}" in account ${accountId}`);

  if (values.json) {
    io.stdout.write(`${JSON.stringify({ data: page.entries.map(cliEntryView), has_more: page.hasMore })}\n`);
  } else if (page.entries.length === 0) {
    io.stdout.write(`No ledger entries for ${accountId}${after ? ` before ${after}` : ''}\n`);
  } else {
    const usd = (micros: number) => `$${formatMicrosAsUsd(micros)}`;
    io.stdout.write(
      formatTable([
        ['ID', 'CREATED', 'KIND', 'AMOUNT', 'BALANCE AFTER', 'REQUEST', 'DESCRIPTION'],
        ...page.entries.map((entry) => {
          const view = ledgerEntryView(entry);
          return [
            view.id,
            view.created_at,
            view.kind,
            usd(entry.amountMicros),
            usd(entry.balanceAfterMicros),
            view.request_id ?? '-',
            view.description,
          ];
        }),
      ]),
    );
    if (page.hasMore) {
      const last = page.entries[page.entries.length - 1]!;
      io.stdout.write(`More entries: tollgate ledger --account ${accountId} --after ${last.id}\n`);
    }
  }
  return 0;
}

/** An entry in `--json` output: the view of `GET /v1/ledger`, its USD amount as an exact string like the CLI's others. */
function cliEntryView(entry: LedgerEntry) {
  return { ...ledgerEntryView(entry), amount_usd: formatMicrosAsUsd(entry.amountMicros) };
}
