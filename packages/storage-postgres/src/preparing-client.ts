import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * A pg `Client` that runs every parameterised statement as a named prepared statement: the server
 * parses and plans each distinct SQL text once per connection instead of on every call. The
 * request path's statements are few and always the same text (see `prepared-query.ts` in
 * storage-kysely), so the set stays small. Statements without parameters (DDL, `BEGIN`, `COMMIT`)
 * run as they are. Postgres re-plans a prepared statement by itself when the tables it reads change
 * or `search_path` points elsewhere.
 */
export class PreparingClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads; only (text, values) is rewritten
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
      return super.query({ name: statementName(config), text: config, values }, callback);
    }
    return super.query(config, values, callback);
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
