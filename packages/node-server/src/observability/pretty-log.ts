/** pino's numeric levels, as a person reads them. */
const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

const LEVEL_COLOURS: Record<number, string> = {
  10: '\x1b[90m',
  20: '\x1b[36m',
  30: '\x1b[32m',
  40: '\x1b[33m',
  50: '\x1b[31m',
  60: '\x1b[35m',
};

/** pino's own fields, shown in the line's head (level, time, message) or not at all. */
const HEAD_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name']);

export interface PrettyOptions {
  /** ANSI colours for the level (for a terminal). */
  colour: boolean;
}

/**
 * A pino destination that writes each JSON line as one line for a person:
 * `12:04:05.123 INFO  request requestId=req_… status=200 durationMs=12`. Fields keep pino's
 * values (redaction has already happened); a line that is not JSON passes through as it is.
 */
export function prettyDestination(
  out: { write(text: string): unknown },
  options: PrettyOptions,
): { write(text: string): void } {
  return {
    write(text: string) {
      let formatted = '';
      for (const line of text.split('\n')) {
        if (line !== '') formatted += `${formatLogLine(line, options)}\n`;
      }
      out.write(formatted);
    },
  };
}

/** One pino JSON line as text (see `prettyDestination`). */
export function formatLogLine(line: string, options: PrettyOptions): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null) return line;
  const level = typeof entry.level === 'number' ? entry.level : 30;
  const name = (LEVEL_NAMES[level] ?? String(entry.level)).padEnd(5);
  const levelText = options.colour ? `${LEVEL_COLOURS[level] ?? ''}${name}\x1b[0m` : name;
  const time = typeof entry.time === 'number' ? clockTime(new Date(entry.time)) : '';
  let out = `${time} ${levelText} ${typeof entry.msg === 'string' ? entry.msg : ''}`;
  for (const [key, value] of Object.entries(entry)) {
    if (HEAD_FIELDS.has(key) || value === undefined) continue;
    out += ` ${key}=${formatValue(value)}`;
  }
  return out;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/** Local `HH:MM:SS.mmm`. */
function clockTime(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}
