import { describe, expect, it } from 'vitest';
import { runCli } from './cli/run-cli.js';
import { createLogger, LogSettingError, parseLogFormat, parseLogLevel } from './logger.js';
import { formatLogLine } from './observability/pretty-log.js';

/** A destination that keeps what it was given; `isTTY` as a terminal's stderr says it. */
function capture(isTTY?: boolean) {
  const lines: string[] = [];
  return { lines, destination: { isTTY, write: (text: string) => lines.push(text) } };
}

describe('LOG_LEVEL', () => {
  it('takes each pino level, in any case, and defaults to info', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
      expect(parseLogLevel(level)).toBe(level);
      expect(parseLogLevel(level.toUpperCase())).toBe(level);
    }
    expect(parseLogLevel(undefined)).toBe('info');
    expect(parseLogLevel('')).toBe('info');
  });

  it('a bad value is a clear error naming it and the allowed ones, not a pino crash', () => {
    expect(() => createLogger({ LOG_LEVEL: 'verbose' }, capture().destination)).toThrow(LogSettingError);
    expect(() => createLogger({ LOG_LEVEL: 'verbose' }, capture().destination)).toThrow(
      'LOG_LEVEL "verbose" is not one of fatal, error, warn, info, debug, trace, silent',
    );
  });

  it('`tollgate serve` with a bad LOG_LEVEL exits 1 with that message on stderr', async () => {
    let stderr = '';
    let stdout = '';
    const code = await runCli(['serve'], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      env: { LOG_LEVEL: 'loud', TOLLGATE_DRAIN_DELAY_MS: '0' },
      cwd: process.cwd(),
      waitForShutdown: () => Promise.resolve('test'),
    });
    expect(code).toBe(1);
    expect(stderr).toBe(
      'tollgate: LOG_LEVEL "loud" is not one of fatal, error, warn, info, debug, trace, silent\n',
    );
    expect(stdout).toBe('');
  });

  it('filters by level', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ LOG_LEVEL: 'warn' }, destination);
    logger.info({}, 'hidden');
    logger.warn({}, 'shown');
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['shown']);
  });
});

describe('LOG_FORMAT', () => {
  it('defaults to pretty on a terminal and to JSON otherwise; json and pretty force it', () => {
    expect(parseLogFormat(undefined, true)).toBe('pretty');
    expect(parseLogFormat(undefined, false)).toBe('json');
    expect(parseLogFormat('json', true)).toBe('json');
    expect(parseLogFormat('PRETTY', false)).toBe('pretty');
    expect(() => parseLogFormat('xml', false)).toThrow('LOG_FORMAT "xml" is not one of json, pretty');
  });

  it('JSON lines when the destination is not a terminal', () => {
    const { lines, destination } = capture(false);
    createLogger({}, destination).info({ requestId: 'req_1', status: 200 }, 'request');
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 30,
      msg: 'request',
      requestId: 'req_1',
      status: 200,
    });
  });

  it('one readable line (level coloured) on a terminal', () => {
    const { lines, destination } = capture(true);
    createLogger({}, destination).info({ requestId: 'req_1', status: 200, model: 'acme/gpt' }, 'request');
    expect(lines).toHaveLength(1);
    const ESC = String.fromCharCode(27);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} /);
    expect(lines[0]!.slice(13)).toBe(
      `${ESC}[32mINFO ${ESC}[0m request requestId=req_1 status=200 model=acme/gpt\n`,
    );
  });

  it('LOG_FORMAT=pretty without a terminal: no colours; NO_COLOR turns them off on a terminal too', () => {
    const plain = capture(false);
    createLogger({ LOG_FORMAT: 'pretty' }, plain.destination).warn({ reason: 'http 503' }, 'upstream');
    expect(plain.lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}upstream reason="http 503"\n$/);
    const noColour = capture(true);
    createLogger({ NO_COLOR: '1' }, noColour.destination).error({}, 'x');
    expect(noColour.lines[0]).not.toContain(String.fromCharCode(27));
  });

  it('LOG_FORMAT=json on a terminal: JSON lines', () => {
    const { lines, destination } = capture(true);
    createLogger({ LOG_FORMAT: 'json' }, destination).info({}, 'hello');
    expect(JSON.parse(lines[0]!).msg).toBe('hello');
  });

  it('the pretty form keeps redaction and passes a non-JSON line through', () => {
    const { lines, destination } = capture(true);
    createLogger({ LOG_FORMAT: 'pretty' }, destination).info(
      { headers: { authorization: 'Bearer sk-x' } },
      'h',
    );
    expect(lines[0]).not.toContain('sk-x');
    expect(formatLogLine('not json', { colour: false })).toBe('not json');
  });
});
