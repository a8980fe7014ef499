import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * A pg `Client` that runs every parameterised statement as a named prepared statement: the server
 * parses and plans each distinct SQL text once per connection instead of on every call (on the
 * request path that halved the time spent in storage). The request path's statements are few and
 * always the same text (see `prepared-query.ts` in storage-kysely), so the set stays small.
 * Statements without parameters (DDL, `BEGIN`, `COMMIT`) run as they are.
 *
 * Postgres re-plans a prepared statement by itself when the tables it reads change or
 * `search_path` points elsewhere, except when the change alters the columns a `SELECT *` or
 * `RETURNING *` yields (another process migrating the database while this one runs): then every
 * call fails with "cached plan must not change result type". So on that error this connection
 * moves to fresh statement names, and the next call prepares them again. The failed call itself
 * still fails.
 */
export class PreparingClient extends pg.Client {
  #generation = 0;

  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads; only (text, values) is rewritten
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config !== 'string' || !Array.isArray(values) || values.length === 0 || callback) {
      return super.query(config, values, callback);
    }
    const generation = this.#generation;
    const name = `${statementName(config)}_${generation}`;
    return (super.query({ name, text: config, values }) as Promise<unknown>).catch((error: unknown) => {
      if (isStaleResultType(error) && this.#generation === generation) this.#generation++;
      throw error;
    });
  }
}

const names = new Map<string, string>();

/** A short name that stands for one SQL text (a collision would need equal 64-bit hash prefixes). */
function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `tg_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
    names.set(text, name);
  }
  return name;
}

function isStaleResultType(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '0A000' && typeof message === 'string' && message.includes('must not change result type');
}
