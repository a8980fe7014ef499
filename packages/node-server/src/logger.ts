import { isatty } from 'node:tty';
import pino, { type Logger } from 'pino';
import { prettyDestination } from './observability/pretty-log.js';
import { TurnBatchedOutput } from './observability/turn-batched-output.js';

/** What `LOG_LEVEL` may say (pino's levels). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What `LOG_FORMAT` may say: JSON lines, or one line for a person. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** A `LOG_LEVEL` or `LOG_FORMAT` the logger cannot use; the message names the value and the allowed ones. */
export class LogSettingError extends Error {
  override name = 'LogSettingError';
}

/** `LOG_LEVEL` (case-insensitive; unset or empty: `info`). Throws `LogSettingError`. */
export function parseLogLevel(value: string | undefined): LogLevel {
  return parseChoice('LOG_LEVEL', value, LOG_LEVELS) ?? 'info';
}

/**
 * `LOG_FORMAT` (case-insensitive); unset or empty: `pretty` when the log goes to a terminal, else
 * `json`. Throws `LogSettingError`.
 */
export function parseLogFormat(value: string | undefined, terminal: boolean): LogFormat {
  return parseChoice('LOG_FORMAT', value, LOG_FORMATS) ?? (terminal ? 'pretty' : 'json');
}

function parseChoice<T extends string>(
  name: string,
  value: string | undefined,
  allowed: readonly T[],
): T | null {
  const text = value?.trim().toLowerCase() ?? '';
  if (text === '') return null;
  if ((allowed as readonly string[]).includes(text)) return text as T;
  throw new LogSettingError(`${name} "${value}" is not one of ${allowed.join(', ')}`);
}

/**
 * The server's logger, on stderr or `destination` (stdout is kept for what a person must read, such
 * as the first-start keys); on the process's own stderr, a turn's lines leave in one write
 * (`TurnBatchedOutput`). Level from `LOG_LEVEL` (default `info`); format from `LOG_FORMAT`
 * (`json` or `pretty`; default: `pretty` on a terminal, JSON lines otherwise). Authorization headers
 * are redacted in case a caller ever logs one; request content is never passed to it. Throws
 * `LogSettingError` for a value it does not know.
 */
export function createLogger(
  env: Record<string, string | undefined> = {},
  destination?: { write(text: string): unknown; isTTY?: boolean },
): Logger {
  const level = parseLogLevel(env.LOG_LEVEL);
  const terminal = destination ? destination.isTTY === true : isatty(2);
  const format = parseLogFormat(env.LOG_FORMAT, terminal);
  // The process's own stderr (or stdout) gathers a turn's lines into one write; a destination a
  // caller passed (a test's capture) gets each line at once.
  const out =
    destination === undefined
      ? new TurnBatchedOutput(pino.destination({ fd: 2, sync: true }))
      : destination === process.stderr || destination === process.stdout
        ? new TurnBatchedOutput(destination)
        : destination;
  return pino(
    {
      name: 'tollgate',
      level,
      redact: ['authorization', 'headers.authorization', 'req.headers.authorization'],
    },
    format === 'pretty' ? prettyDestination(out, { colour: terminal && !env.NO_COLOR }) : out,
  );
}
