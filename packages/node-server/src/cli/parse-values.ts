import { type ParseArgsConfig, parseArgs } from 'node:util';
import { parseUsdToMicros } from '@tollgate/core';
import { UsageError } from './cli-errors.js';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** The parsed values of a command's options: booleans for flags, strings otherwise, absent when not given. */
export type OptionValues<O extends OptionsConfig> = {
  [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : string;
};

/** Options every command takes. */
export const COMMON_OPTIONS = {
  db: { type: 'string' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * Strict `parseArgs` over one command's arguments; a parse failure becomes a one-line `UsageError`
 * (node's messages go on with advice after their first sentence).
 */
export function parseCommandArgs<O extends OptionsConfig>(
  command: string,
  args: string[],
  options: O,
  positionals = 0,
): { values: OptionValues<O>; positionals: string[] } {
  const prepared = attachDashValues(command, args, options);
  let parsed: { values: OptionValues<O>; positionals: string[] };
  try {
    parsed = parseArgs({ args: prepared, options, strict: true, allowPositionals: true }) as typeof parsed;
  } catch (error) {
    const message = (error as Error).message.split(/\.\s/)[0]?.replace(/\.$/, '') ?? 'invalid arguments';
    throw new UsageError(`${command}: ${message}`);
  }
  if (!parsed.values.help && parsed.positionals.length !== positionals) {
    throw new UsageError(
      positionals === 0
        ? `${command}: unexpected argument '${parsed.positionals[0]}'`
        : `${command}: expected ${positionals} argument${positionals > 1 ? 's' : ''}, got ${parsed.positionals.length}`,
    );
  }
  return parsed;
}

/**
 * Lets a string option take a value that starts with `-` (`--usd -5`), which `parseArgs` refuses as
 * "ambiguous": the pair becomes `--usd=-5`, so the value's own check names the option and the value.
 * A following token that is itself an option (`--name --json`, `--name -h`), or none, is a missing
 * value.
 */
function attachDashValues(command: string, args: string[], options: OptionsConfig): string[] {
  const shorts = new Set(
    Object.values(options).flatMap((option) => (option.short ? [`-${option.short}`] : [])),
  );
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    const next = args[i + 1];
    if (
      name !== undefined &&
      options[name]?.type === 'string' &&
      (next === undefined || next.startsWith('-'))
    ) {
      if (next === undefined || next.startsWith('--') || shorts.has(next)) {
        throw new UsageError(`${command}: --${name} needs a value`);
      }
      out.push(`--${name}=${next}`);
      i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}

/** A required string option. */
export function required(command: string, flag: string, value: string | undefined): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`${command}: missing --${flag}`);
  return value;
}

/**
 * A USD amount parsed exactly into micros (at most 6 decimals); `positive` refuses 0. The error
 * names the option and the value as given (`--usd must be a positive amount in USD, got "-5"`).
 */
export function usdOption(
  command: string,
  flag: string,
  value: string,
  { positive }: { positive: boolean },
): number {
  const fail = (problem: string): never => {
    throw new UsageError(`${command}: --${flag} ${problem}, got "${value}"`);
  };
  const amount = positive ? 'a positive amount in USD' : 'an amount in USD (0 or more)';
  let micros = 0;
  try {
    micros = parseUsdToMicros(value);
  } catch (error) {
    const message = (error as Error).message;
    if (message.includes('more than 6 decimals')) fail(`must be ${amount} with at most 6 decimals`);
    if (message.includes('too large')) fail('is too large');
    fail(`must be ${amount}`);
  }
  if (positive && micros === 0) fail(`must be ${amount}`);
  return micros;
}

/** An integer option within [min, max]. */
export function intOption(command: string, flag: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${command}: --${flag} must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return n;
}

/** One of the allowed values. */
export function enumOption<T extends string>(
  command: string,
  flag: string,
  value: string,
  allowed: readonly T[],
): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`${command}: --${flag} must be one of ${allowed.join(', ')}, got "${value}"`);
  }
  return value as T;
}
