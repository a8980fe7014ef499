/** One command's help: its synopsis, what it does, and one line per option. */
export interface CommandHelp {
  /** The words after `tollgate`, then its arguments and options, e.g. `account show ID [--json]`. */
  synopsis: string;
  summary: string;
  /** `[flag, description]`, the command's own options; the common ones are appended. */
  options: [string, string][];
}

const DB = [
  '--db URL_OR_PATH',
  'postgres://… selects Postgres, anything else is a SQLite file, which must exist but for serve and account create --create (env DATABASE_URL; default ./tollgate.db)',
] as [string, string];
const CONFIG = [
  '--config FILE',
  'the JSON config (env TOLLGATE_CONFIG; default ./tollgate.config.json, else the bundled example)',
] as [string, string];
const HELP = ['-h, --help', 'show this help'] as [string, string];
const json = (shape: string): [string, string] => [
  '--json',
  `print exactly one JSON object on stdout: ${shape}`,
];

/** Every command's help, by its words (`serve`, `account create`, …), in the order `--help` lists them. */
export const COMMAND_HELP: Record<string, CommandHelp> = {
  serve: {
    synopsis:
      'serve [--port N] [--host ADDR] [--workers N] [--drain-delay-ms MS] [--grace-ms MS] [--db-timeout-ms MS]',
    summary: 'Start the gateway; on first start, create a default account and print its keys once',
    options: [
      ['--port N', 'the port to listen on (env PORT; default 8787; 0 picks a free port)'],
      ['--host ADDR', 'the address to listen on (env HOST; default 127.0.0.1)'],
      ['--workers N', 'run N processes on the port with node:cluster (1 to 64; default 1)'],
      [
        '--drain-delay-ms MS',
        'after SIGTERM/SIGINT, how long new requests are still served while /readyz answers 503 (env TOLLGATE_DRAIN_DELAY_MS; default 5000)',
      ],
      [
        '--grace-ms MS',
        'from the signal, how long in-flight requests and streams may finish before they are cut and settled (env TOLLGATE_GRACE_MS; default 60000)',
      ],
      ['--drain-timeout-ms MS', 'the older name of --grace-ms'],
      [
        '--db-timeout-ms MS',
        'how long one storage call may take before the request answers 503 storage_unavailable (env TOLLGATE_DB_TIMEOUT_MS; default 5000)',
      ],
    ],
  },
  'account create': {
    synopsis:
      'account create --name NAME [--credit-usd AMOUNT] [--monthly-limit-usd AMOUNT] [--default-rpm N] [--create] [--json]',
    summary: 'Create an account and print its id',
    options: [
      ['--name NAME', 'the account name (required)'],
      ['--credit-usd AMOUNT', 'an opening top-up in USD: a credit line plus the configured fee line'],
      ['--monthly-limit-usd AMOUNT', 'a ceiling on charges per UTC calendar month (default: none)'],
      ['--default-rpm N', "requests per minute for keys without their own limit (default: the config's)"],
      ['--create', 'create the SQLite database if it does not exist yet (else it must exist)'],
      json('{"id": "acct_…"}'),
    ],
  },
  'account list': {
    synopsis: 'account list [--json]',
    summary: 'List every account: id, name, status and balance',
    options: [json('{"data": [{"id", "name", "suspended", "balance_usd", …}]}')],
  },
  'account show': {
    synopsis: 'account show ID [--json]',
    summary: 'Show an account: balance, month-to-date spend, monthly limit, default rpm, status, keys',
    options: [json('{"data": {"id", "balance_usd", "month_to_date", "key_count", …}}')],
  },
  'account suspend': {
    synopsis: 'account suspend ID [--json]',
    summary: 'Suspend an account: every key of it is refused with 403 account_suspended',
    options: [json('{"id", "suspended": true}')],
  },
  'account unsuspend': {
    synopsis: 'account unsuspend ID [--json]',
    summary: 'Lift a suspension',
    options: [json('{"id", "suspended": false}')],
  },
  'credits add': {
    synopsis: 'credits add --account ID --usd AMOUNT [--json]',
    summary: 'Top up an account: a credit line plus the configured fee line (billing.top_up_fee_percent)',
    options: [
      ['--account ID', 'the account to credit (required)'],
      ['--usd AMOUNT', 'the amount in USD, more than 0, at most 6 decimals (required)'],
      json('{"account_id", "amount_micros", "fee_micros", "balance_usd", …}'),
    ],
  },
  ledger: {
    synopsis: 'ledger --account ID [--limit N] [--after ENTRY_ID] [--json]',
    summary:
      "List an account's ledger, newest first: credits, fees, charges, corrections, balance after each",
    options: [
      ['--account ID', 'the account whose ledger to list (required)'],
      ['--limit N', 'how many entries, 1 to 200 (default 50)'],
      ['--after ENTRY_ID', 'start after this entry (the last id of the previous page)'],
      json(
        '{"data": [{"id", "created_at", "amount_micros", "amount_usd", "balance_after_micros", "kind", …}], "has_more"}',
      ),
    ],
  },
  'key create': {
    synopsis:
      'key create --account ID --name NAME [--scope inference|provisioning] [--env live|test] [--project ID] [--spend-limit-usd AMOUNT] [--limit-reset daily|weekly|monthly] [--rate-limit-rpm N] [--json]',
    summary: 'Create an API key and print it (the only time the full key is shown)',
    options: [
      ['--account ID', 'the account the key spends from (required)'],
      ['--name NAME', 'a label for the key, at most 100 characters (required)'],
      ['--scope SCOPE', 'inference (call models; the default) or provisioning (manage keys)'],
      ['--env ENV', 'live (a gw_live_ key; the default) or test (a gw_test_ key)'],
      ['--project ID', 'a project of the account to attribute the key to'],
      ['--spend-limit-usd AMOUNT', 'a lifetime spend cap for the key in USD (default: none)'],
      [
        '--limit-reset WINDOW',
        'daily, weekly or monthly: the cap applies to each UTC day, week (from Monday) or month instead of the lifetime',
      ],
      ['--rate-limit-rpm N', "requests per minute (default: the account's, else the config's)"],
      json('{"id": "key_…", "key": "gw_live_…", "prefix": "…"}'),
    ],
  },
  'key list': {
    synopsis: 'key list --account ID [--json]',
    summary:
      'List the keys of an account (never the secret): prefix, scope, state (enabled, disabled, revoked, expired), spend, rate limit',
    options: [
      ['--account ID', 'the account whose keys to list (required)'],
      json('{"data": [{"id", "prefix", "name", "scope", "env", "state", "spent_usd", …}]}'),
    ],
  },
  'key disable': {
    synopsis: 'key disable ID [--json]',
    summary: 'Pause a key: refused with 401 key_revoked until enabled again',
    options: [json('{"id", "state": "disabled", …} (the key as key list shows it)')],
  },
  'key enable': {
    synopsis: 'key enable ID [--json]',
    summary: 'Resume a paused key (a revoked key cannot be enabled)',
    options: [json('{"id", "state": "enabled", …}')],
  },
  'key revoke': {
    synopsis: 'key revoke ID [--json]',
    summary: 'Revoke a key for good: the row stays, every later use is refused with 401 key_revoked',
    options: [json('{"id", "state": "revoked", "revoked": true, …}')],
  },
  'byok add': {
    synopsis: 'byok add --account ID --provider P --api-key K [--label L] [--allow-fallback] [--json]',
    summary:
      "Store one of an account's own provider keys, sealed under the server secret (never shown again)",
    options: [
      ['--account ID', 'the account the key belongs to (required)'],
      ['--provider P', 'a provider id of the config (required; not the demo provider)'],
      ['--api-key K', "the provider's API key (required; printed nowhere)"],
      ['--label L', 'a label for the key, at most 100 characters'],
      ['--allow-fallback', 'let failures other than a rejected key fall back to the paid routes'],
      json('{"id": "byok_…", "provider", "label", "allow_fallback", "created_at"}'),
    ],
  },
  'project create': {
    synopsis: 'project create --account ID --name NAME [--json]',
    summary: 'Create a project in an account, to attribute keys and usage to',
    options: [
      ['--account ID', 'the account (required)'],
      ['--name NAME', 'the project name (required)'],
      json('{"id": "proj_…"}'),
    ],
  },
};

function optionLines(options: [string, string][]): string {
  const width = Math.max(...options.map(([flag]) => flag.length)) + 2;
  return options.map(([flag, text]) => `  ${flag.padEnd(width)}${text}\n`).join('');
}

/** The help of one command (`serve`, `account create`, …), or `undefined` when there is none. */
export function commandUsage(name: string): string | undefined {
  const help = COMMAND_HELP[name];
  if (!help) return undefined;
  return `Usage: tollgate ${help.synopsis}\n\n${help.summary}.\n\nOptions:\n${optionLines([...help.options, DB, CONFIG, HELP])}`;
}

/** The words of every command of a group (`account` → `account create`, `account list`, …). */
export function groupCommands(group: string): string[] {
  return Object.keys(COMMAND_HELP).filter((name) => name.startsWith(`${group} `));
}

/** The help of a command group (`tollgate account --help`): its subcommands, one line each. */
export function groupUsage(group: string): string {
  const lines = groupCommands(group)
    .map((name) => `  ${COMMAND_HELP[name]?.synopsis}\n      ${COMMAND_HELP[name]?.summary}\n`)
    .join('');
  return `Usage: tollgate ${group} <subcommand> [options]\n\nSubcommands:\n${lines}\nRun tollgate ${group} <subcommand> --help for its options.\n`;
}

/** The help text of the `tollgate` binary. */
export const USAGE = `Usage: tollgate <command> [options]

Commands:
${Object.values(COMMAND_HELP)
  .map((help) => `  ${help.synopsis}\n      ${help.summary}\n`)
  .join('')}
Options for every command:
${optionLines([DB, CONFIG, ['--json', 'print exactly one JSON object on stdout'], ['-h, --help', 'show the help of a command (also: tollgate help <command>)'], ['-v, --version', 'print the version of tollgate']])}
Run tollgate <command> --help for a command's options.
`;
