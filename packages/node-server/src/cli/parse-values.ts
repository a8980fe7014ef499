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
  let parsed: { values: OptionValues<O>; positionals: string[] };
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true }) as typeof parsed;
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

/** A required string option. */
export function required(command: string, flag: string, value: string | undefined): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`${command}: missing --${flag}`);
  return value;
}

/** A USD amount parsed exactly into micros (at most 6 decimals); `positive` refuses 0. */
export function usdOption(
  command: string,
  flag: string,
  value: string,
  { positive }: { positive: boolean },
): number {
  let micros: number;
  try {
    micros = parseUsdToMicros(value);
  } catch (error) {
    throw new UsageError(`${command}: --${flag} ${(error as Error).message}`);
  }
  if (positive && micros === 0) throw new UsageError(`${command}: --${flag} must be greater than 0`);
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
