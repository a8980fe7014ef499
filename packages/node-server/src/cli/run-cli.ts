import { packageVersion } from '../package-version.js';
import { accountCreate, accountList, accountSetSuspended, accountShow } from './account-commands.js';
import { byokAdd } from './byok-command.js';
import { CliError, UsageError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';
import { creditsAdd } from './credits-command.js';
import { keyCreate, keyList } from './key-command.js';
import { keySetState } from './key-state-commands.js';
import { ledgerList } from './ledger-command.js';
import { projectCreate } from './project-command.js';
import { serve } from './serve-command.js';
import { commandUsage, groupUsage, USAGE } from './usage.js';

type Command = (args: string[], io: CliIo) => Promise<number>;

/** Every command, by its words. */
const COMMANDS: Record<string, Command | Record<string, Command>> = {
  serve: (args, io) => serve(args, io),
  account: {
    create: accountCreate,
    list: accountList,
    show: accountShow,
    suspend: accountSetSuspended(true),
    unsuspend: accountSetSuspended(false),
  },
  credits: { add: creditsAdd },
  ledger: ledgerList,
  key: {
    create: keyCreate,
    list: keyList,
    disable: keySetState('disable'),
    enable: keySetState('enable'),
    revoke: keySetState('revoke'),
  },
  byok: { add: byokAdd },
  project: { create: projectCreate },
};

const isHelpFlag = (arg: string | undefined) => arg === '--help' || arg === '-h';

/** Whether the command's arguments ask for help (`--help` or `-h` anywhere before a `--`). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some(isHelpFlag);
}

/**
 * Runs the `tollgate` command line in-process and resolves its exit code: 0 on success, 1 when the
 * command could not be carried out, 2 for a malformed command line. Errors go to `io.stderr` as one
 * line; stdout only ever carries the command's result. `--help` on any command or group prints its
 * own usage; `--version` prints the package version.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [first, second] = argv;
  if (first === '--version' || first === '-v') {
    const version = packageVersion();
    io.stdout.write(argv.includes('--json') ? `${JSON.stringify({ version })}\n` : `${version}\n`);
    return 0;
  }
  if (first === undefined) {
    io.stderr.write(`tollgate: missing command\n\n${USAGE}`);
    return 2;
  }
  if (isHelpFlag(first)) {
    io.stdout.write(USAGE);
    return 0;
  }
  if (first === 'help') return help(argv.slice(1), io);
  // The command's words, for "see tollgate … --help" after a malformed command line.
  let name = first;
  try {
    const entry = COMMANDS[first];
    if (!entry) {
      io.stderr.write(`tollgate: unknown command "${first}"\n\n${USAGE}`);
      return 2;
    }
    if (typeof entry === 'function') {
      if (asksForHelp(argv.slice(1))) return printHelp(io, first);
      return await entry(argv.slice(1), io);
    }
    if (isHelpFlag(second)) return printHelp(io, first);
    const sub = second === undefined ? undefined : entry[second];
    if (!sub) {
      const what =
        second === undefined || second.startsWith('-')
          ? `missing ${first} subcommand`
          : `unknown command "${first} ${second}"`;
      io.stderr.write(`tollgate: ${what}\n\n${groupUsage(first)}`);
      return 2;
    }
    name = `${first} ${second}`;
    if (asksForHelp(argv.slice(2))) return printHelp(io, name);
    return await sub(argv.slice(2), io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`tollgate ${error.message} (see tollgate ${name} --help)\n`);
      return 2;
    }
    if (error instanceof CliError) {
      io.stderr.write(`tollgate: ${error.message}\n`);
      return 1;
    }
    io.stderr.write(`tollgate: ${(error as Error)?.message ?? String(error)}\n`);
    return 1;
  }
}

/** Prints the help of a command (`account create`) or group (`account`) on stdout. */
function printHelp(io: CliIo, name: string): number {
  io.stdout.write(commandUsage(name) ?? groupUsage(name));
  return 0;
}

/** `tollgate help [COMMAND [SUBCOMMAND]]` (options after the words are ignored). */
function help(args: string[], io: CliIo): number {
  const firstOption = args.findIndex((arg) => arg.startsWith('-'));
  const words = firstOption === -1 ? args : args.slice(0, firstOption);
  if (words.length === 0) {
    io.stdout.write(USAGE);
    return 0;
  }
  const name = words.join(' ');
  const entry = COMMANDS[words[0] as string];
  const known =
    words.length === 1 ? entry !== undefined : words.length === 2 && commandUsage(name) !== undefined;
  if (!known) {
    io.stderr.write(`tollgate: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  return printHelp(io, name);
}
