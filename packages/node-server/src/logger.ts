import pino, { type Logger } from 'pino';

/**
 * The server's logger: JSON lines on stderr or `destination` (stdout is kept for what a person must
 * read, such as the first-start keys). Level from `LOG_LEVEL` (default `info`). Authorization headers are redacted in
 * case a caller ever logs one; request content is never passed to it.
 */
export function createLogger(
  env: Record<string, string | undefined> = {},
  destination: { write(text: string): unknown } = pino.destination({ fd: 2, sync: true }),
): Logger {
  return pino(
    {
      name: 'tollgate',
      level: env.LOG_LEVEL ?? 'info',
      redact: ['authorization', 'headers.authorization', 'req.headers.authorization'],
    },
    destination,
  );
}
