/** A malformed command line (unknown command or option, missing or bad value): exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A well-formed command that cannot be carried out (unknown account, unreadable config…): exit code 1. */
export class CliError extends Error {
  override name = 'CliError';
}
