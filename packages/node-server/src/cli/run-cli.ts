import { accountCreate, accountSetSuspended } from './account-commands.js';
import { CliError, UsageError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';
import { creditsAdd } from './credits-command.js';
import { keyCreate } from './key-command.js';
import { projectCreate } from './project-command.js';
import { serve } from './serve-command.js';
import { USAGE } from './usage.js';

type Command = (args: string[], io: CliIo) => Promise<number>;

/** Every command, by its words. */
const COMMANDS: Record<string, Command | Record<string, Command>> = {
  serve: (args, io) => serve(args, io),
  account: {
    create: accountCreate,
    suspend: accountSetSuspended(true),
    unsuspend: accountSetSuspended(false),
  },
  credits: { add: creditsAdd },
  key: { create: keyCreate },
  project: { create: projectCreate },
};

/**
 * Runs the `tollgate` command line in-process and resolves its exit code: 0 on success, 1 when the
 * command could not be carried out, 2 for a malformed command line. Errors go to `io.stderr` as one
 * line; stdout only ever carries the command's result.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [first, second] = argv;
  if (first === '--help' || first === '-h' || first === 'help') {
    io.stdout.write(USAGE);
    return 0;
  }
  try {
    const entry = first === undefined ? undefined : COMMANDS[first];
    if (!entry) {
      const what = first === undefined ? 'missing command' : `unknown command "${first}"`;
      io.stderr.write(`tollgate: ${what}\n\n${USAGE}`);
      return 2;
    }
    if (typeof entry === 'function') return await entry(argv.slice(1), io);
    const sub = second === undefined ? undefined : entry[second];
    if (!sub) {
      const what =
        second === undefined ? `missing ${first} subcommand` : `unknown command "${first} ${second}"`;
      io.stderr.write(`tollgate: ${what}\n\n${USAGE}`);
      return 2;
    }
    return await sub(argv.slice(2), io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`tollgate ${error.message} (see tollgate --help)\n`);
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
