/** A pino-compatible subset. Never pass request content to it. */
export interface GatewayLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  /** Routine events nobody needs to act on (a client that hung up); optional. */
  debug?(obj: object, msg?: string): void;
}

/** The default logger: one JSON line per event on the console. */
export const consoleLogger: GatewayLogger = {
  info: (obj, msg) => console.info(JSON.stringify({ level: 'info', msg, ...obj })),
  warn: (obj, msg) => console.warn(JSON.stringify({ level: 'warn', msg, ...obj })),
  error: (obj, msg) => console.error(JSON.stringify({ level: 'error', msg, ...obj })),
};
